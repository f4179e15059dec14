#!/usr/bin/env bash
# Real services for the test suite and distributed mode, on loopback, data under .infra/ (gitignored).
#   scripts/infra.sh up          PostgreSQL (127.0.0.1:55432) + Kafka (127.0.0.1:19092) + Docker Engine
#                                (standard socket, machine-wide; test image rigmarket/busybox) + a Docker
#                                registry (127.0.0.1:5000, htpasswd auth); writes .infra/env
#   scripts/infra.sh down        stop Kafka, PostgreSQL, the edge, the registry and a dockerd we started (data is kept)
#   scripts/infra.sh status      what runs (exit 0 only when PostgreSQL, Kafka and Docker all answer)
#   scripts/infra.sh env         print the export lines (eval "$(scripts/infra.sh env)")
#   scripts/infra.sh nginx-up    the nginx edge on 127.0.0.1:8080 (distributed mode)
#   scripts/infra.sh nginx-down
#   scripts/infra.sh registry-up the local Docker registry alone (registry-down stops it)
#   scripts/infra.sh smoke       kafkajs smoke test against the broker (infra/kafka/smoke.sh)
#   scripts/infra.sh edge-test   routing check of the edge with stand-in upstreams (infra/nginx/test-routing.sh)
# Everything is idempotent: up on a running stack is a fast no-op. Reset: scripts/infra.sh down && rm -rf .infra
# Ports: PG_PORT, KAFKA_PORT, KAFKA_CONTROLLER_PORT, EDGE_PORT, IDENTITY_PORT, MARKETPLACE_PORT,
# INSTANCE_PORT, SYNC_PORT. Kafka version: KAFKA_VERSION (default 4.1.1; fallback 3.9.1).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
I=$REPO/infra
# shellcheck source=../infra/lib.sh
. "$I/lib.sh"
# shellcheck source=../infra/postgres/common.sh
. "$I/postgres/common.sh"
# shellcheck source=../infra/kafka/common.sh
. "$I/kafka/common.sh"
# shellcheck source=../infra/docker/common.sh
. "$I/docker/common.sh"
# shellcheck source=../infra/nginx/common.sh
. "$I/nginx/common.sh"
# shellcheck source=../infra/registry/common.sh
. "$I/registry/common.sh"
T=infra

env_lines() {
  echo "export DATABASE_URL=postgres://rigmarket:rigmarket@127.0.0.1:$PG_PORT/rigmarket"
  echo "export KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT"
  echo "export DOCKER_HOST=$DOCKER_HOST"
  echo "export REGISTRY_ADDRESS=127.0.0.1:$REGISTRY_PORT"
}
docker_status() {
  if docker_answers; then echo "running on $DOCKER_HOST (engine $(docker version --format '{{.Server.Version}}' 2>/dev/null))"; return 0; fi
  echo "down ($DOCKER_HOST)"; return 1
}

pg_status() {
  local bin
  bin=$(find_pg_bin 2>/dev/null) || { echo "not installed"; return 1; }
  if PGPASSWORD=rigmarket PGCONNECT_TIMEOUT=3 "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U rigmarket -d rigmarket \
       -XtAqc 'select 1' >/dev/null 2>&1; then
    if pg_ours_running; then echo "running on 127.0.0.1:$PG_PORT (pid $(head -n1 "$PG_DATA/postmaster.pid"), data $PG_DATA)"
    else echo "answering on 127.0.0.1:$PG_PORT (not the cluster in $PG_DATA)"; fi
    return 0
  fi
  echo "down (127.0.0.1:$PG_PORT)"; return 1
}
kafka_status() {
  if kafka_answers; then
    if pid_alive "$KAFKA_PIDFILE"; then echo "running on 127.0.0.1:$KAFKA_PORT (pid $(cat "$KAFKA_PIDFILE"), Kafka $(cat "$KAFKA_DIR/data.version" 2>/dev/null || echo '?'))"
    else echo "answering on 127.0.0.1:$KAFKA_PORT (not started by infra/kafka/start.sh)"; fi
    return 0
  fi
  if pid_alive "$KAFKA_PIDFILE"; then echo "starting or stuck (pid $(cat "$KAFKA_PIDFILE"), not answering on $KAFKA_PORT)"; return 1; fi
  echo "down (127.0.0.1:$KAFKA_PORT)"; return 1
}
nginx_status() {
  if pid_alive "$NGINX_PIDFILE" && curl -fsS -m 3 -o /dev/null "http://127.0.0.1:$EDGE_PORT/healthz" 2>/dev/null; then
    echo "running on 127.0.0.1:$EDGE_PORT (pid $(cat "$NGINX_PIDFILE"))"; return 0
  fi
  echo "down (127.0.0.1:$EDGE_PORT)"; return 1
}

cmd=${1:-}
case "$cmd" in
  up)
    t0=$SECONDS
    say "$T" "up: PostgreSQL + Kafka + Docker Engine (data in $INFRA_DIR)"
    mkdir -p "$INFRA_DIR"
    bash "$I/postgres/start.sh" || die "$T" "PostgreSQL did not start (see the lines above)"
    bash "$I/kafka/start.sh" || die "$T" "Kafka did not start (see the lines above)"
    bash "$I/docker/start.sh" || die "$T" "the Docker Engine did not start (see the lines above)"
    bash "$I/registry/start.sh" || die "$T" "the Docker registry did not start (see the lines above)"
    env_lines > "$INFRA_DIR/env"
    say "$T" "up in $((SECONDS - t0))s; wrote $INFRA_DIR/env:"
    sed 's/^/    /' "$INFRA_DIR/env" >&2
    ;;
  down)
    rc=0
    bash "$I/nginx/stop.sh" || rc=1
    bash "$I/kafka/stop.sh" || rc=1
    bash "$I/postgres/stop.sh" || rc=1
    bash "$I/registry/stop.sh" || rc=1
    bash "$I/docker/stop.sh" || rc=1
    [ "$rc" -eq 0 ] || die "$T" "some service did not stop (see above)"
    ;;
  status)
    rc=0
    s=$(pg_status) || rc=1;    printf '%-9s %s\n' postgres "$s"
    s=$(kafka_status) || rc=1; printf '%-9s %s\n' kafka "$s"
    s=$(docker_status) || rc=1; printf '%-9s %s\n' docker "$s"
    s=$(nginx_status) || true; printf '%-9s %s\n' nginx "$s"
    if registry_answers; then s="running on 127.0.0.1:$REGISTRY_PORT"; else s="down (127.0.0.1:$REGISTRY_PORT)"; fi
    printf '%-9s %s\n' registry "$s"
    exit "$rc"
    ;;
  env)        env_lines ;;
  docker-up)  bash "$I/docker/start.sh" ;;
  docker-down) bash "$I/docker/stop.sh" ;;
  nginx-up)   bash "$I/nginx/start.sh" ;;
  nginx-down) bash "$I/nginx/stop.sh" ;;
  registry-up)   bash "$I/registry/start.sh" ;;
  registry-down) bash "$I/registry/stop.sh" ;;
  smoke)      shift; bash "$I/kafka/smoke.sh" "$@" ;;
  edge-test)  bash "$I/nginx/test-routing.sh" ;;
  *)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
    [ -z "$cmd" ] || [ "$cmd" = help ] || [ "$cmd" = -h ] || [ "$cmd" = --help ] || die "$T" "unknown command: $cmd"
    [ -n "$cmd" ] || exit 2
    ;;
esac
