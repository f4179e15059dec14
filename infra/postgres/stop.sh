#!/usr/bin/env bash
# Stop the cluster in $REPO/.infra/pg/data (fast shutdown; PG_STOP_MODE=immediate stops it as a crash would,
# recovering from the WAL at the next start). Idempotent: no-op when it is not running.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=postgres
take_lock "$T" "$INFRA_DIR/locks/postgres.lock"

if ! pg_ours_running; then
  say "$T" "not running"
  exit 0
fi
PG_BIN=$(find_pg_bin) || die "$T" "no PostgreSQL binaries found"
say "$T" "stopping ($PG_DATA)"
as_pg "$PG_BIN/pg_ctl" stop -D "$PG_DATA" -m "${PG_STOP_MODE:-fast}" -w -t 60 -s ||
  die "$T" "pg_ctl stop failed; see $PG_LOG"
say "$T" "stopped"
