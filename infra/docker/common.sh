# shellcheck shell=bash
# Docker Engine settings shared by start.sh, stop.sh and image.sh. Source it; do not run it.
# The engine is machine-wide (one daemon, one docker0 bridge), so it lives at the standard socket and
# its lock is machine-wide too: several checkouts of the repo share one daemon.
DOCKER_SOCK=${DOCKER_SOCK:-/var/run/docker.sock}
export DOCKER_HOST=${DOCKER_HOST:-unix://$DOCKER_SOCK}
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/rigmarket-dockerd.log}
DOCKERD_PIDFILE=${DOCKERD_PIDFILE:-/var/run/rigmarket-dockerd.pid}
DOCKER_LOCK=${DOCKER_LOCK:-/tmp/rigmarket-docker.lock}
# The small local image the tests and the demo run (no registry is reachable): Debian's busybox-static.
TEST_IMAGE=${RIGMARKET_TEST_IMAGE:-rigmarket/busybox:latest}

docker_answers() { timeout 10 docker info >/dev/null 2>&1; }
