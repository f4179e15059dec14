# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the scripts that source this file
# Shared by infra/postgres/start.sh and stop.sh. Source it after infra/lib.sh.
PG_PORT=${PG_PORT:-55432}
PG_DIR=${PG_DIR:-$INFRA_DIR/pg}
PG_DATA=$PG_DIR/data
PG_LOG=$PG_DIR/postgres.log
PG_RUN=$PG_DIR/run
# a unix socket path is limited to 107 bytes; fall back to /tmp for deep checkouts
if [ $(( ${#PG_RUN} + 20 )) -gt 100 ]; then PG_RUN=/tmp/rigmarket-pg-$PG_PORT; fi
PG_OS_USER=postgres   # initdb/postgres refuse to run as root: when root, everything runs as this user

# find_pg_bin: the bin dir of the PostgreSQL major version the data dir was made with, else the newest
find_pg_bin() {
  local d
  if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return 0; fi
  if [ -s "$PG_DATA/PG_VERSION" ]; then
    d=/usr/lib/postgresql/$(cat "$PG_DATA/PG_VERSION")/bin
    if [ -x "$d/postgres" ]; then echo "$d"; return 0; fi
  fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && [ -x "$d/psql" ]; then
      echo "$d"; return 0
    fi
  done
  return 1
}

# as_pg CMD...: run as the postgres OS user when we are root, else as ourselves
as_pg() {
  if is_root; then runuser -u "$PG_OS_USER" -- "$@"; else "$@"; fi
}

# pg_ours_running: the cluster in $PG_DATA has a live postmaster
pg_ours_running() {
  [ -s "$PG_DATA/postmaster.pid" ] || return 1
  local pid
  pid=$(head -n1 "$PG_DATA/postmaster.pid" | tr -dc '0-9')
  [ -n "$pid" ] && proc_alive "$pid"
}
