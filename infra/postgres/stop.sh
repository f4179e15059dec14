#!/usr/bin/env bash
# Stop the cluster in $REPO/.infra/pg/data (fast shutdown). Idempotent: no-op when it is not running.
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
as_pg "$PG_BIN/pg_ctl" stop -D "$PG_DATA" -m fast -w -t 60 -s ||
  die "$T" "pg_ctl stop failed; see $PG_LOG"
say "$T" "stopped"
