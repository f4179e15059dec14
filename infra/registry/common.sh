# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the scripts that source this file
# Shared by infra/registry/start.sh and stop.sh. Source it after infra/lib.sh.
# A local Docker registry (Debian's docker-registry, the CNCF distribution server) for the snapshot tests:
# the Docker Engine pushes to 127.0.0.1 without TLS (127.0.0.0/8 is an insecure registry by default), and
# htpasswd auth makes the credentials matter. Test credentials only; it listens on loopback alone.
REGISTRY_PORT=${REGISTRY_PORT:-5000}
REGISTRY_USER=${REGISTRY_USER:-rigmarket}
REGISTRY_PASSWORD=${REGISTRY_PASSWORD:-registry-test-password}
REGISTRY_DIR=${REGISTRY_DIR:-$INFRA_DIR/registry}
REGISTRY_PIDFILE=$REGISTRY_DIR/registry.pid
REGISTRY_LOG=$REGISTRY_DIR/registry.log
REGISTRY_LOCK=${REGISTRY_LOCK:-/tmp/rigmarket-registry-$REGISTRY_PORT.lock}

# registry_answers: the registry's API answers on the port (401 without credentials, 200 with them)
registry_answers() {
  local code
  code=$(curl -s -m 3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$REGISTRY_PORT/v2/" 2>/dev/null) || return 1
  [ "$code" = 200 ] || [ "$code" = 401 ]
}
