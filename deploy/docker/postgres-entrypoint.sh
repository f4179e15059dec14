#!/bin/bash
# PostgreSQL for docker compose: on an empty $PGDATA, initdb, then the role $POSTGRES_USER (password
# $POSTGRES_PASSWORD, required) owning the database $POSTGRES_DB; then postgres in the foreground, listening
# on every interface with password (scram-sha-256) logins from the network.
set -euo pipefail
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  echo "[postgres] initialising $PGDATA"
  "$BIN/initdb" -D "$PGDATA" --username=postgres --auth-local=peer --auth-host=scram-sha-256 --encoding=UTF8 >/dev/null
  cat >>"$PGDATA/postgresql.conf" <<CONF
listen_addresses = '*'
max_connections = 200
unix_socket_directories = '/tmp'
CONF
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  "$BIN/pg_ctl" -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
  # psql's variables quote the names and the password (no injection through the environment)
  "$BIN/psql" -v ON_ERROR_STOP=1 -h /tmp -U postgres -d postgres -q \
    -v user="$POSTGRES_USER" -v pass="$POSTGRES_PASSWORD" -v db="$POSTGRES_DB" <<'SQL'
CREATE ROLE :"user" LOGIN PASSWORD :'pass';
CREATE DATABASE :"db" OWNER :"user";
SQL
  "$BIN/pg_ctl" -D "$PGDATA" -w -m fast stop >/dev/null
fi
exec "$BIN/postgres" -D "$PGDATA"
