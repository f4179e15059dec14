#!/usr/bin/env bash
# Stop the edge started by infra/nginx/start.sh (graceful quit, then TERM). Idempotent.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=nginx
take_lock "$T" "$NGINX_PREFIX/start.lock"

if ! pid_alive "$NGINX_PIDFILE"; then
  say "$T" "not running"
  exit 0
fi
pid=$(cat "$NGINX_PIDFILE")
say "$T" "stopping edge (pid $pid)"
kill -QUIT "$pid" 2>/dev/null || true
if ! wait_gone "$pid" 10; then
  kill -TERM "$pid" 2>/dev/null || true
  wait_gone "$pid" 10 || die "$T" "nginx master $pid did not stop"
fi
rm -f "$NGINX_PIDFILE"
say "$T" "stopped"
