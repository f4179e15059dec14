# The nginx edge (Debian's nginx) routing /api/v0 paths to the four apps, from the same template as the
# loopback edge (infra/nginx/nginx.conf.template). edge-entrypoint.sh renders it at start with the apps'
# addresses (IDENTITY_UPSTREAM, MARKETPLACE_UPSTREAM, INSTANCE_UPSTREAM, SYNC_UPSTREAM: host:port).
ARG DEBIAN_IMAGE=rigmarket/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx && \
    rm -rf /var/lib/apt/lists/* && rm -f /etc/nginx/sites-enabled/default && \
    groupadd --gid 10001 rigmarket && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin rigmarket
COPY edge/ /srv/rigmarket/
ENV EDGE_PORT=8080 IDENTITY_UPSTREAM=identity-2fa:8081 MARKETPLACE_UPSTREAM=marketplace-api:8082 \
    INSTANCE_UPSTREAM=instance-lifecycle:8083 SYNC_UPSTREAM=sync-maintenance:8084
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/srv/rigmarket/edge-entrypoint.sh"]
