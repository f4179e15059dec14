#!/usr/bin/env bash
# Stop the registry that start.sh started (one started by someone else is left alone); its data is kept.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=registry
take_lock "$T" "$REGISTRY_LOCK"
if pid_alive "$REGISTRY_PIDFILE"; then
  pid=$(cat "$REGISTRY_PIDFILE")
  kill "$pid"
  wait_gone "$pid" 15 || die "$T" "docker-registry (pid $pid) did not stop in 15 s"
  say "$T" "stopped docker-registry (pid $pid)"
else
  say "$T" "no docker-registry started by infra/registry/start.sh is running"
fi
