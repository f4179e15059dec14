#!/usr/bin/env bash
# Stop the broker started by infra/kafka/start.sh: SIGTERM (controlled shutdown), up to 30 s, then SIGKILL
# of that pid only. Idempotent: no-op when it is not running.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=kafka
take_lock "$T" "$INFRA_DIR/locks/kafka.lock"

if ! pid_alive "$KAFKA_PIDFILE"; then
  rm -f "$KAFKA_PIDFILE"
  say "$T" "not running"
  exit 0
fi
pid=$(cat "$KAFKA_PIDFILE")
say "$T" "stopping broker (pid $pid)"
kill -TERM "$pid" 2>/dev/null || true
if ! wait_gone "$pid" "${KAFKA_STOP_TIMEOUT:-30}"; then
  say "$T" "still alive after ${KAFKA_STOP_TIMEOUT:-30}s; sending SIGKILL to $pid"
  kill -KILL "$pid" 2>/dev/null || true
  wait_gone "$pid" 10 || die "$T" "pid $pid survived SIGKILL"
fi
rm -f "$KAFKA_PIDFILE"
say "$T" "stopped"
