# One Apache Kafka broker in KRaft mode (broker and controller in one process), from the Maven Central
# jars that infra/kafka/start.sh fetched (staged as kafka/libs) and Debian's JRE, for docker compose (a
# cluster uses its own Kafka: the Helm chart takes its brokers). Settings: infra/kafka/server.properties
# plus the container's listeners (kafka-entrypoint.sh).
ARG DEBIAN_IMAGE=rigmarket/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless && \
    rm -rf /var/lib/apt/lists/* && \
    groupadd --gid 10001 rigmarket && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin rigmarket && \
    install -d -o 10001 -g 10001 /var/lib/kafka
COPY kafka/ /srv/kafka/
ENV KAFKA_ADVERTISED_HOST=kafka KAFKA_HEAP_OPTS="-Xms256m -Xmx512m"
USER 10001:10001
EXPOSE 9092
VOLUME /var/lib/kafka
ENTRYPOINT ["/srv/kafka/kafka-entrypoint.sh"]
