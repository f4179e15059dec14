#!/usr/bin/env bash
# Start (installing if needed) the local Docker registry on 127.0.0.1:$REGISTRY_PORT (5000) with htpasswd
# auth ($REGISTRY_USER / $REGISTRY_PASSWORD), data under .infra/registry. Idempotent: a registry that
# already answers on the port is reused as it is (the registry is machine-wide, like the Docker Engine).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=registry

take_lock "$T" "$REGISTRY_LOCK"
if registry_answers; then
  say "$T" "registry already answers on 127.0.0.1:$REGISTRY_PORT (reused)"
  exit 0
fi
missing=()
command -v docker-registry >/dev/null || missing+=(docker-registry)
command -v htpasswd >/dev/null || missing+=(apache2-utils)
command -v curl >/dev/null || missing+=(curl)
[ "${#missing[@]}" -eq 0 ] || apt_install "$T" "${missing[@]}"
mkdir -p "$REGISTRY_DIR/data"
htpasswd -Bbc "$REGISTRY_DIR/htpasswd" "$REGISTRY_USER" "$REGISTRY_PASSWORD" 2>/dev/null
cat > "$REGISTRY_DIR/config.yml" <<YAML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $REGISTRY_DIR/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$REGISTRY_PORT
auth:
  htpasswd:
    realm: rigmarket-registry
    path: $REGISTRY_DIR/htpasswd
YAML
say "$T" "starting docker-registry on 127.0.0.1:$REGISTRY_PORT (log $REGISTRY_LOG)"
# setsid + closed lock fd: the registry outlives this script and does not hold the lock.
setsid docker-registry serve "$REGISTRY_DIR/config.yml" >>"$REGISTRY_LOG" 2>&1 9>&- < /dev/null &
echo $! > "$REGISTRY_PIDFILE"
for _ in $(seq 1 40); do
  registry_answers && break
  sleep 0.25
done
registry_answers || { tail -n 30 "$REGISTRY_LOG" >&2; die "$T" "docker-registry did not answer within 10 s (log above)"; }
say "$T" "registry up on 127.0.0.1:$REGISTRY_PORT (user $REGISTRY_USER)"
