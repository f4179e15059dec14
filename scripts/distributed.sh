#!/usr/bin/env bash
# Distributed mode on one machine: PostgreSQL + Kafka (scripts/infra.sh), the four apps as separate
# processes (identity-2fa 8081, marketplace-api 8082, instance-lifecycle 8083, sync-maintenance 8084),
# and the nginx edge on 127.0.0.1:8080 routing /api/v0 paths to the owning app. Ctrl-C stops the apps.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -e node_modules/@rigmarket/contracts ] || npm install --no-audit --no-fund
bash scripts/infra.sh up
# shellcheck disable=SC1091
. .infra/env
npx turbo run build --output-logs=errors-only
mkdir -p .infra/logs
# marketplace-api seals templates' registry passwords and instance-lifecycle opens them: one key for both
# (docs/operations.md); kept owner-only under .infra/ when the environment gives none.
if [ -z "${RIGMARKET_REGISTRY_KEY:-}" ]; then
  [ -s .infra/registry.key ] || (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >.infra/registry.key)
  RIGMARKET_REGISTRY_KEY=$(cat .infra/registry.key)
  export RIGMARKET_REGISTRY_KEY
fi
# Rate-limit counters shared by all four apps (docs/operations.md, Rate limits).
export RIGMARKET_RATE_LIMIT_STORE=${RIGMARKET_RATE_LIMIT_STORE:-postgres}
pids=()
start_app() { # name port
  echo "starting $1 on 127.0.0.1:$2 (log .infra/logs/$1.log)"
  PORT=$2 node "apps/$1/dist/main.js" >".infra/logs/$1.log" 2>&1 &
  pids+=($!)
}
start_app identity-2fa 8081
start_app marketplace-api 8082
start_app instance-lifecycle 8083
start_app sync-maintenance 8084
trap 'kill "${pids[@]}" 2>/dev/null; bash scripts/infra.sh nginx-down >/dev/null 2>&1 || true' EXIT INT TERM
for port in 8081 8082 8083 8084; do
  for _ in $(seq 1 120); do curl -fs "127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.5; done
  curl -fs "127.0.0.1:$port/readyz" >/dev/null || { echo "app on $port did not become ready; see .infra/logs" >&2; exit 1; }
done
# Another copy may already answer on these ports: make sure the apps we started are the ones alive.
for pid in "${pids[@]}"; do
  kill -0 "$pid" 2>/dev/null || { echo "an app exited while starting (port already taken?); see .infra/logs" >&2; exit 1; }
done
bash scripts/infra.sh nginx-up
echo "Rigmarket (distributed) on http://127.0.0.1:${EDGE_PORT:-8080}/api/v0/ ; Ctrl-C to stop"
wait
