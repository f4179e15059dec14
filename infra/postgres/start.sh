#!/usr/bin/env bash
# Start (installing if needed) a PostgreSQL cluster for tests and distributed mode:
#   data in $REPO/.infra/pg/data, listening on 127.0.0.1:${PG_PORT:-55432} only,
#   role rigmarket/rigmarket (superuser) and database rigmarket.
# Idempotent: when the port already answers and rigmarket can log in, it does nothing.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=postgres

# 1. binaries (Debian package `postgresql`); installed only when missing
if ! PG_BIN=$(find_pg_bin); then
  apt_install "$T" postgresql
  PG_BIN=$(find_pg_bin) || die "$T" "postgresql installed but no /usr/lib/postgresql/*/bin/postgres found"
fi

pg_ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 3; }
app_login_ok() {
  PGPASSWORD=rigmarket PGCONNECT_TIMEOUT=5 "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U rigmarket \
    -d rigmarket -XtAqc 'select 1' >/dev/null 2>&1
}
bootstrap_role_and_db() {
  as_pg "$PG_BIN/psql" -h "$PG_RUN" -p "$PG_PORT" -U postgres -d postgres -XqAt -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rigmarket') THEN
    CREATE ROLE rigmarket LOGIN SUPERUSER PASSWORD 'rigmarket';
  ELSE
    ALTER ROLE rigmarket LOGIN SUPERUSER PASSWORD 'rigmarket';
  END IF;
END $$;
SELECT 'CREATE DATABASE rigmarket OWNER rigmarket'
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'rigmarket')\gexec
SQL
  app_login_ok || die "$T" "role/database created but rigmarket still cannot log in on 127.0.0.1:$PG_PORT"
}

take_lock "$T" "$INFRA_DIR/locks/postgres.lock"

# 2. already running?
if pg_ready; then
  if app_login_ok; then
    say "$T" "already running on 127.0.0.1:$PG_PORT (reused)"
    exit 0
  fi
  if pg_ours_running; then
    say "$T" "running on 127.0.0.1:$PG_PORT; creating role/database rigmarket"
    bootstrap_role_and_db
    exit 0
  fi
  die "$T" "a PostgreSQL server answers on 127.0.0.1:$PG_PORT but it is not the cluster in $PG_DATA and rigmarket/rigmarket cannot log in; stop it or choose another PG_PORT"
fi
if pg_ours_running; then
  running_port=$(sed -n 4p "$PG_DATA/postmaster.pid" | tr -dc '0-9')
  if [ -n "$running_port" ] && [ "$running_port" != "$PG_PORT" ]; then
    die "$T" "the cluster in $PG_DATA is running on port $running_port, not PG_PORT=$PG_PORT; stop it first (bash infra/postgres/stop.sh) to change the port"
  fi
fi
if port_open 127.0.0.1 "$PG_PORT" && ! pg_ours_running; then
  die "$T" "127.0.0.1:$PG_PORT is taken by something that is not PostgreSQL; stop it or set PG_PORT"
fi

# 3. data directory, owned by the postgres OS user (initdb and postgres refuse to run as root)
if is_root && ! id "$PG_OS_USER" >/dev/null 2>&1; then
  die "$T" "OS user '$PG_OS_USER' is missing (it comes with the postgresql-common package)"
fi
mkdir -p "$PG_DIR" "$PG_RUN"
if is_root; then
  chown "$PG_OS_USER:" "$PG_DIR" "$PG_RUN"
  [ -d "$PG_DATA" ] && chown -R "$PG_OS_USER:" "$PG_DATA"
  [ -e "$PG_LOG" ] && chown "$PG_OS_USER:" "$PG_LOG"
  as_pg test -w "$PG_DIR" ||
    die "$T" "user '$PG_OS_USER' cannot reach $PG_DIR (a parent directory is not world-searchable, e.g. a checkout under /root); set INFRA_DIR or PG_DIR to a reachable place"
fi
chmod 700 "$PG_DIR"

if [ ! -s "$PG_DATA/PG_VERSION" ]; then
  if [ -d "$PG_DATA" ] && [ -n "$(ls -A "$PG_DATA" 2>/dev/null)" ]; then
    die "$T" "$PG_DATA exists, is not empty and is not a PostgreSQL data directory; remove it"
  fi
  say "$T" "initdb $PG_DATA ($("$PG_BIN/postgres" --version))"
  as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C --no-sync >"$PG_DIR/initdb.log" 2>&1 ||
    { tail -n 30 "$PG_DIR/initdb.log" >&2; die "$T" "initdb failed (log: $PG_DIR/initdb.log)"; }
fi

# 4. settings (rewritten each start so that PG_PORT changes apply); included from postgresql.conf
cat > "$PG_DATA/rigmarket.conf" <<CONF
# written by infra/postgres/start.sh; edits are overwritten
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_RUN'
max_connections = 200
CONF
# test/dev speed: a crash can lose or corrupt data, never use for anything you want to keep. PG_DURABLE=1
# keeps PostgreSQL's durable defaults (the crash tests restart a cluster of their own that way).
if [ "${PG_DURABLE:-0}" != 1 ]; then
  printf 'fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n' >> "$PG_DATA/rigmarket.conf"
fi
grep -q "^include_if_exists = 'rigmarket.conf'" "$PG_DATA/postgresql.conf" ||
  printf "\ninclude_if_exists = 'rigmarket.conf'\n" >> "$PG_DATA/postgresql.conf"
if is_root; then chown "$PG_OS_USER:" "$PG_DATA/rigmarket.conf" "$PG_DATA/postgresql.conf"; fi

# 5. start (or wait for a postmaster that is still starting / recovering)
if pg_ours_running; then
  say "$T" "postmaster already running in $PG_DATA; waiting for it to accept connections"
else
  say "$T" "starting on 127.0.0.1:$PG_PORT (log: $PG_LOG)"
  as_pg "$PG_BIN/pg_ctl" start -D "$PG_DATA" -l "$PG_LOG" -w -t 60 -s 9>&- ||
    { tail -n 40 "$PG_LOG" >&2 2>/dev/null || true; die "$T" "pg_ctl start failed (log: $PG_LOG)"; }
fi
for _ in $(seq 1 120); do pg_ready && break; sleep 0.5; done
pg_ready || { tail -n 40 "$PG_LOG" >&2 2>/dev/null || true; die "$T" "not accepting connections on 127.0.0.1:$PG_PORT after 60 s"; }

bootstrap_role_and_db
say "$T" "ready: postgres://rigmarket:rigmarket@127.0.0.1:$PG_PORT/rigmarket"
