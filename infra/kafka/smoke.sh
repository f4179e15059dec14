#!/usr/bin/env bash
# kafkajs 2.2.4 smoke test against the running broker (docs/kafka.md §6): admin, idempotent producer,
# consumer group with commit/restart, 2-member rebalance, transactions (commit/abort, read_committed).
#   bash infra/kafka/smoke.sh            # against 127.0.0.1:${KAFKA_PORT:-19092}
#   bash infra/kafka/smoke.sh --crash    # also kill -9 the broker mid-test and restart it (0 lost, 0 dup)
# kafkajs is installed with npm into ${KAFKA_SMOKE_DIR:-/tmp/kafka-smoke}, never into the repo.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=kafka-smoke
SMOKE_DIR=${KAFKA_SMOKE_DIR:-/tmp/kafka-smoke}

command -v node >/dev/null || die "$T" "node is required"
if [ ! -f "$SMOKE_DIR/node_modules/kafkajs/package.json" ] ||
   [ "$(node -p "require('$SMOKE_DIR/node_modules/kafkajs/package.json').version")" != 2.2.4 ]; then
  say "$T" "installing kafkajs@2.2.4 into $SMOKE_DIR (npm)"
  mkdir -p "$SMOKE_DIR"
  [ -f "$SMOKE_DIR/package.json" ] || echo '{"name":"kafka-smoke","private":true}' > "$SMOKE_DIR/package.json"
  (cd "$SMOKE_DIR" && npm install --no-audit --no-fund --loglevel=error kafkajs@2.2.4 >/dev/null) ||
    die "$T" "npm install kafkajs@2.2.4 failed"
fi
kafka_answers || die "$T" "no Kafka broker answers on 127.0.0.1:$KAFKA_PORT (start it: bash infra/kafka/start.sh)"

if [ "${1:-}" = --crash ]; then
  export SMOKE_CRASH=1 SMOKE_PIDFILE="$KAFKA_PIDFILE" SMOKE_RESTART_CMD="bash '$HERE/start.sh'"
fi
KAFKA_BROKERS=${KAFKA_BROKERS:-127.0.0.1:$KAFKA_PORT} KAFKAJS_NO_PARTITIONER_WARNING=1 \
  NODE_PATH="$SMOKE_DIR/node_modules" node "$HERE/smoke.js"
