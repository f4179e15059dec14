#!/usr/bin/env bash
# Prove the edge routes each path to the right app: starts the edge (if not running), puts stand-in
# upstreams (node, in test-routing.js) on the four app ports, checks every route of the table, headers,
# bodies on GET/DELETE, the JSON 404, the access log, and a JSON 502 for a stopped upstream.
# The app ports must be free (run it before starting the apps), or run it on other ports, e.g.
#   EDGE_PORT=18080 IDENTITY_PORT=18081 MARKETPLACE_PORT=18082 INSTANCE_PORT=18083 SYNC_PORT=18084 \
#   NGINX_PREFIX=/tmp/edge-test bash infra/nginx/test-routing.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=nginx-test

started=0
if ! pid_alive "$NGINX_PIDFILE"; then started=1; fi
bash "$HERE/start.sh"
rc=0
EDGE_PORT=$EDGE_PORT IDENTITY_PORT=$IDENTITY_PORT MARKETPLACE_PORT=$MARKETPLACE_PORT \
INSTANCE_PORT=$INSTANCE_PORT SYNC_PORT=$SYNC_PORT EDGE_ACCESS_LOG="$NGINX_PREFIX/logs/access.log" \
  node "$HERE/test-routing.js" || rc=$?
if [ "$started" = 1 ]; then bash "$HERE/stop.sh"; fi
[ "$rc" -eq 0 ] || die "$T" "routing check failed"
