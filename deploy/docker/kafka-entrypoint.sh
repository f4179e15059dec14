#!/bin/bash
# One Kafka broker in KRaft mode for docker compose: infra/kafka/server.properties (the loopback broker's
# settings) with the container's listeners appended (a later key wins in a properties file): clients on
# :9092, advertised as $KAFKA_ADVERTISED_HOST:9092, the controller on loopback :9093 (one node). Formats
# /var/lib/kafka/data once, then runs the broker in the foreground.
set -euo pipefail
K=/srv/kafka
CONF=/tmp/kafka-server.properties
DATA=/var/lib/kafka/data
CLUSTER_ID=${KAFKA_CLUSTER_ID:-MkU3OEVBNTcwNTJENDM2Qk}
{
  sed -e "s#__KAFKA_DATA_DIR__#$DATA#" "$K/server.properties"
  cat <<PROPS
# --- container listeners (kafka-entrypoint.sh) ---
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://0.0.0.0:9092,CONTROLLER://127.0.0.1:9093
advertised.listeners=PLAINTEXT://${KAFKA_ADVERTISED_HOST:?}:9092
PROPS
} >"$CONF"
LOGOPT="-Dlog4j2.configurationFile=$K/log4j2.properties"
mkdir -p "$DATA" /tmp/kafka-logs
if [ ! -f "$DATA/meta.properties" ]; then
  echo "[kafka] formatting $DATA (cluster id $CLUSTER_ID)"
  java -Xmx256m "$LOGOPT" -Dkafka.logs.dir=/tmp/kafka-logs -cp "$K/libs/*" kafka.tools.StorageTool format \
    --ignore-formatted --cluster-id "$CLUSTER_ID" --config "$CONF"
fi
# shellcheck disable=SC2086 # KAFKA_HEAP_OPTS holds several options
exec java $KAFKA_HEAP_OPTS -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
  "$LOGOPT" -Dkafka.logs.dir=/tmp/kafka-logs -cp "$K/libs/*" kafka.Kafka "$CONF"
