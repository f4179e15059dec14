#!/usr/bin/env bash
# Start a one-node Apache Kafka broker (KRaft, combined broker+controller) from Maven Central jars:
#   PLAINTEXT 127.0.0.1:${KAFKA_PORT:-19092}, controller 127.0.0.1:${KAFKA_CONTROLLER_PORT:-19093},
#   jars cached in .infra/kafka/libs-<version>, data in .infra/kafka/data, log in .infra/kafka/logs/broker.out.
# Recipe: docs/kafka.md §1. Idempotent: skips when the pid is alive and the broker answers.
# KAFKA_VERSION=3.9.1 selects the fallback (reload4j logging instead of log4j2).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=kafka
K=$KAFKA_DIR
PORT=$KAFKA_PORT
CPORT=$KAFKA_CONTROLLER_PORT
START_BUDGET_S=${KAFKA_START_TIMEOUT:-180}

take_lock "$T" "$INFRA_DIR/locks/kafka.lock"

# 0. already running?
launch=1
if pid_alive "$KAFKA_PIDFILE"; then
  if kafka_answers; then
    say "$T" "already running (pid $(cat "$KAFKA_PIDFILE"), 127.0.0.1:$PORT)"
    exit 0
  fi
  say "$T" "broker process $(cat "$KAFKA_PIDFILE") is alive but not answering yet; waiting for it"
  launch=0
elif port_open 127.0.0.1 "$PORT"; then
  if kafka_answers; then
    say "$T" "a Kafka broker not started by this script already answers on 127.0.0.1:$PORT; reusing it"
    exit 0
  fi
  die "$T" "127.0.0.1:$PORT is taken by something that does not speak Kafka; stop it or set KAFKA_PORT"
fi

if [ "$launch" = 1 ]; then
  port_open 127.0.0.1 "$CPORT" &&
    die "$T" "controller port 127.0.0.1:$CPORT is already taken; stop that process or set KAFKA_CONTROLLER_PORT"

  # 1. prerequisites: JDK 17+ and Maven (Debian packages when missing)
  missing=()
  if ! command -v java >/dev/null; then missing+=(openjdk-17-jre-headless); fi
  if ! command -v mvn >/dev/null; then missing+=(maven); fi
  if [ ${#missing[@]} -gt 0 ]; then apt_install "$T" "${missing[@]}"; fi
  jmajor=$(java -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p')
  [ "${jmajor:-0}" -ge 17 ] || die "$T" "Kafka $KAFKA_VERSION needs Java 17+, found: $(java -version 2>&1 | head -n1)"

  mkdir -p "$K/conf" "$K/data" "$K/logs" "$K/tmp"

  # 2. jars from Maven Central (cached per version; ~/.m2 caches the downloads too)
  if [ ! -f "$KAFKA_LIBS/.complete" ]; then
    case "$KAFKA_VERSION" in 3.*) profile=reload4j ;; *) profile=log4j2 ;; esac
    say "$T" "fetching Kafka $KAFKA_VERSION jars from Maven Central into $KAFKA_LIBS (slow the first time: ~1-2 min on a cold ~/.m2)"
    rm -rf "$KAFKA_LIBS" "$KAFKA_LIBS.tmp"
    mvn -B -q --no-transfer-progress -f "$HERE/pom.xml" -P "$profile" \
        -Dkafka.version="$KAFKA_VERSION" -Dlog4j2.version="$LOG4J2_VERSION" \
        dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIBS.tmp" \
        >"$K/logs/mvn.log" 2>&1 ||
      { tail -n 40 "$K/logs/mvn.log" >&2; die "$T" "mvn dependency:copy-dependencies failed (log: $K/logs/mvn.log)"; }
    [ -f "$KAFKA_LIBS.tmp/kafka_2.13-$KAFKA_VERSION.jar" ] ||
      die "$T" "kafka_2.13-$KAFKA_VERSION.jar missing after the Maven download (log: $K/logs/mvn.log)"
    touch "$KAFKA_LIBS.tmp/.complete"
    mv "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
    say "$T" "$(find "$KAFKA_LIBS" -name '*.jar' | wc -l) jars in $KAFKA_LIBS"
  fi

  # 3. config: render the repo templates (ports, data dir)
  sed -e "s#__KAFKA_DATA_DIR__#$K/data#" -e "s/19092/$PORT/g" -e "s/19093/$CPORT/g" \
      "$HERE/server.properties" > "$K/conf/server.properties"
  case "$KAFKA_VERSION" in
    3.*) cp "$HERE/log4j.properties" "$K/conf/log4j.properties"
         LOGOPT="-Dlog4j.configuration=file:$K/conf/log4j.properties" ;;
    *)   cp "$HERE/log4j2.properties" "$K/conf/log4j2.properties"
         LOGOPT="-Dlog4j2.configurationFile=$K/conf/log4j2.properties" ;;
  esac

  # 4. format storage once per data dir (--ignore-formatted keeps re-runs harmless; cluster id is fixed)
  if [ -f "$K/data.version" ] && [ "$(cat "$K/data.version")" != "$KAFKA_VERSION" ] && [ -z "${KAFKA_WIPE_DATA:-}" ]; then
    die "$T" "$K/data was formatted by Kafka $(cat "$K/data.version"), not $KAFKA_VERSION; wipe it with: rm -rf '$K/data' '$K/data.version' (or set KAFKA_WIPE_DATA=1)"
  fi
  if [ -n "${KAFKA_WIPE_DATA:-}" ]; then
    say "$T" "KAFKA_WIPE_DATA set: wiping $K/data"
    rm -rf "$K/data" "$K/data.version"; mkdir -p "$K/data"
  fi
  if [ ! -f "$K/data/meta.properties" ]; then
    say "$T" "formatting storage $K/data (cluster id $KAFKA_CLUSTER_ID)"
    java -Xmx256m "$LOGOPT" -Djava.io.tmpdir="$K/tmp" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool format \
         --ignore-formatted --cluster-id "$KAFKA_CLUSTER_ID" --config "$K/conf/server.properties" \
         >"$K/logs/format.log" 2>&1 ||
      { tail -n 40 "$K/logs/format.log" >&2; die "$T" "kafka-storage format failed (log: $K/logs/format.log)"; }
    echo "$KAFKA_VERSION" > "$K/data.version"
  fi

  # 5. launch, detached into its own session so it outlives this shell
  say "$T" "starting Kafka $KAFKA_VERSION on 127.0.0.1:$PORT (controller $CPORT; log: $KAFKA_OUT)"
  rm -f "$KAFKA_PIDFILE"
  # shellcheck disable=SC2086
  setsid nohup bash -c 'echo $$ > "$0"; exec "$@"' "$KAFKA_PIDFILE" \
    java ${KAFKA_HEAP_OPTS:--Xms512m -Xmx1g} \
      -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
      -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true \
      "$LOGOPT" -Dkafka.logs.dir="$K/logs" -Djava.io.tmpdir="$K/tmp" \
      -cp "$KAFKA_LIBS/*" kafka.Kafka "$K/conf/server.properties" \
    > "$KAFKA_OUT" 2>&1 < /dev/null 9>&- &
  for _ in $(seq 1 20); do [ -s "$KAFKA_PIDFILE" ] && break; sleep 0.1; done
fi

# 6. wait for readiness: the log line, then an ApiVersions answer (fail loudly with the log tail)
t0=$SECONDS
fail() { say "$T" "last lines of $KAFKA_OUT:"; tail -n 60 "$KAFKA_OUT" >&2 2>/dev/null || true; die "$T" "$*"; }
until grep -q 'Kafka Server started' "$KAFKA_OUT" 2>/dev/null; do
  pid_alive "$KAFKA_PIDFILE" || fail "the broker JVM exited during startup"
  [ $((SECONDS - t0)) -lt "$START_BUDGET_S" ] || fail "no 'Kafka Server started' after ${START_BUDGET_S}s (pid $(cat "$KAFKA_PIDFILE" 2>/dev/null))"
  sleep 0.5
done
until kafka_answers; do
  [ $((SECONDS - t0)) -lt "$START_BUDGET_S" ] || fail "broker logged 'Kafka Server started' but does not answer on 127.0.0.1:$PORT"
  sleep 0.5
done
say "$T" "ready: 127.0.0.1:$PORT (Kafka $KAFKA_VERSION, pid $(cat "$KAFKA_PIDFILE"), $((SECONDS - t0))s to start)"
