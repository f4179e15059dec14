# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the scripts that source this file
# Shared by infra/kafka/start.sh, stop.sh and smoke.sh. Source it after infra/lib.sh.
KAFKA_VERSION=${KAFKA_VERSION:-4.1.1}          # fallback: KAFKA_VERSION=3.9.1
case "$KAFKA_VERSION" in
  4.2.*|4.3.*) LOG4J2_VERSION=${LOG4J2_VERSION:-2.25.3} ;;
  *)           LOG4J2_VERSION=${LOG4J2_VERSION:-2.24.3} ;;
esac
KAFKA_DIR=${KAFKA_DIR:-$INFRA_DIR/kafka}
KAFKA_PORT=${KAFKA_PORT:-19092}
KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-19093}
# any fixed 22-char base64url UUID; it must stay the same for a given data dir
KAFKA_CLUSTER_ID=${KAFKA_CLUSTER_ID:-MkU3OEVBNTcwNTJENDM2Qk}
# the jars are shared by every broker of this checkout (a test's own broker has its own KAFKA_DIR)
KAFKA_LIBS=${KAFKA_LIBS:-$INFRA_DIR/kafka/libs-$KAFKA_VERSION}
KAFKA_PIDFILE=$KAFKA_DIR/broker.pid
KAFKA_OUT=$KAFKA_DIR/logs/broker.out

# kafka_answers: a Kafka broker answers an ApiVersions v0 request on 127.0.0.1:$KAFKA_PORT
# (raw protocol over bash /dev/tcp: size=11, api_key=18, version=0, correlation_id=7, client_id="x";
#  the reply starts with size(4), correlation_id(4)=7, error_code(2)=0)
kafka_answers() {
  local out
  out=$(timeout 5 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "\x00\x00\x00\x0b\x00\x12\x00\x00\x00\x00\x00\x07\x00\x01x" >&3
    head -c 10 <&3 | od -An -tx1' _ "$KAFKA_PORT" 2>/dev/null) || return 1
  [[ "$out" == *"00 00 00 07 00 00" ]]
}
