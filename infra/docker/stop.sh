#!/usr/bin/env bash
# Stop the dockerd that start.sh started (a daemon started by someone else is left alone).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=docker
take_lock "$T" "$DOCKER_LOCK"
if pid_alive "$DOCKERD_PIDFILE"; then
  pid=$(cat "$DOCKERD_PIDFILE")
  kill "$pid"
  wait_gone "$pid" 30 || die "$T" "dockerd (pid $pid) did not stop in 30 s"
  say "$T" "stopped dockerd (pid $pid)"
else
  say "$T" "no dockerd started by infra/docker/start.sh is running"
fi
