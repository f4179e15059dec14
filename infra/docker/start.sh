#!/usr/bin/env bash
# Start (installing if needed) a Docker Engine for the host agent's Docker driver and its tests, and
# import the local test image (image.sh). Debian's docker.io provides dockerd, containerd and runc.
# Idempotent: a daemon that already answers on $DOCKER_HOST is reused as it is.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=docker

take_lock "$T" "$DOCKER_LOCK"
if docker_answers; then
  say "$T" "engine already answers on $DOCKER_HOST (reused)"
else
  missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v docker >/dev/null || missing+=(docker.io)
  [ -x /bin/busybox ] || [ -x /usr/bin/busybox ] || missing+=(busybox-static)
  if [ "${#missing[@]}" -gt 0 ]; then
    # shellcheck disable=SC2207
    missing=($(printf '%s\n' "${missing[@]}" | sort -u))
    apt_install "$T" "${missing[@]}" iptables
  fi
  is_root || die "$T" "dockerd is not running and only root can start it: sudo bash infra/docker/start.sh"
  say "$T" "starting dockerd on $DOCKER_HOST (log $DOCKERD_LOG)"
  # setsid + closed lock fd: the daemon outlives this script and does not hold the lock.
  setsid dockerd -H "$DOCKER_HOST" --pidfile "$DOCKERD_PIDFILE" >>"$DOCKERD_LOG" 2>&1 9>&- < /dev/null &
  for _ in $(seq 1 60); do
    docker_answers && break
    sleep 0.5
  done
  docker_answers || { tail -n 30 "$DOCKERD_LOG" >&2; die "$T" "dockerd did not answer within 30 s (log above)"; }
  say "$T" "engine up: $(docker version --format '{{.Server.Version}}' 2>/dev/null)"
fi
bash "$HERE/image.sh"
