# The four platform apps: one shared runtime stage (Node + production node_modules + every workspace's
# dist) and one thin target per app that only sets its port and command. scripts/images.sh builds it from
# a staged context (never the repo root: that one has dev dependencies, data/ and .infra/):
#   docker build -f deploy/docker/app.Dockerfile --target identity-2fa \
#     --build-arg DEPS_IMAGE=rigmarket/deps:<hash> .infra/images/app
# DEPS_IMAGE is Node plus the production node_modules (deps.Dockerfile), rebuilt only when
# package-lock.json or Node changes, so an app build sends only the compiled code (a few MB).
ARG DEPS_IMAGE=rigmarket/deps:latest
FROM ${DEPS_IMAGE} AS runtime
COPY app/ /app/
WORKDIR /app
# HOST: listen on every interface of the container (the default, 127.0.0.1, is only right on a laptop).
# NODE_ENV=production: the apps refuse to start without RIGMARKET_TFA_KEY, RIGMARKET_INSTANCE_SEAL_KEY and
# RIGMARKET_REGISTRY_KEY (docs/operations.md), so no secret is ever generated per process by accident.
ENV HOST=0.0.0.0 NODE_ENV=production LOG_FORMAT=json
USER 10001:10001

FROM runtime AS identity-2fa
ENV PORT=8081
EXPOSE 8081
CMD ["node", "apps/identity-2fa/dist/main.js"]

FROM runtime AS marketplace-api
ENV PORT=8082
EXPOSE 8082
CMD ["node", "apps/marketplace-api/dist/main.js"]

FROM runtime AS instance-lifecycle
ENV PORT=8083
EXPOSE 8083
CMD ["node", "apps/instance-lifecycle/dist/main.js"]

FROM runtime AS sync-maintenance
ENV PORT=8084
EXPOSE 8084
CMD ["node", "apps/sync-maintenance/dist/main.js"]
