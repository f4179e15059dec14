# PostgreSQL 15 from Debian's packages, for docker compose (a cluster uses its own PostgreSQL: the Helm chart
# takes its URL). postgres-entrypoint.sh creates the cluster, the role and the database on an empty volume.
ARG DEBIAN_IMAGE=rigmarket/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 && \
    rm -rf /var/lib/apt/lists/* && install -d -o postgres -g postgres /var/lib/rigmarket-pg
COPY postgres/ /srv/rigmarket/
ENV PGDATA=/var/lib/rigmarket-pg/data POSTGRES_USER=rigmarket POSTGRES_DB=rigmarket
USER postgres
EXPOSE 5432
VOLUME /var/lib/rigmarket-pg
ENTRYPOINT ["/srv/rigmarket/postgres-entrypoint.sh"]
