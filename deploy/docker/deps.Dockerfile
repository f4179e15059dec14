# Node (the build machine's own binary: Debian's nodejs is 18, the apps need 20+) and the production
# node_modules of the workspace, on the Debian base that scripts/images.sh makes with mmdebstrap (no
# registry pull). The staged context holds `node` and `deps/node_modules` (npm ci --omit=dev).
ARG DEBIAN_IMAGE=rigmarket/debian:bookworm
FROM ${DEBIAN_IMAGE}
# lets scripts/images.sh prune its superseded images (the app images inherit it)
LABEL io.rigmarket.deps=1
COPY node /usr/local/bin/node
RUN node --version && groupadd --gid 10001 rigmarket && \
    useradd --uid 10001 --gid 10001 --home-dir /app --no-create-home --shell /usr/sbin/nologin rigmarket
COPY deps/ /app/
