#!/usr/bin/env bash
# Builds Rigmarket's container images on the local Docker Engine, with no registry pull (docs/deployment.md):
#   rigmarket/debian:bookworm   Debian 12 minbase made by mmdebstrap from Debian's packages, `docker import`ed
#   rigmarket/deps:<hash>        + Node (this machine's binary) + production node_modules (package-lock.json)
#   rigmarket/<app>:<tag>        identity-2fa, marketplace-api, instance-lifecycle, sync-maintenance
#   rigmarket/edge:<tag>         the nginx edge and the web console;  rigmarket/postgres:<tag>, rigmarket/kafka:<tag> (compose)
# Usage: bash scripts/images.sh [apps] [edge] [postgres] [kafka]   (no argument: all of them)
# Needs a build (npx turbo run build) and, for kafka, the jars infra/kafka/start.sh fetched. Idempotent and
# cached: the base is made once per recipe, the deps image once per lockfile and Node version, and Docker's
# layer cache skips unchanged steps, so a re-run with nothing changed takes seconds.
# RIGMARKET_IMAGE_TAG (default: the version in package.json) tags the images.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=../infra/lib.sh
. "$REPO/infra/lib.sh"
# shellcheck source=../infra/docker/common.sh
. "$REPO/infra/docker/common.sh"
# shellcheck source=../infra/kafka/common.sh
. "$REPO/infra/kafka/common.sh"
T=images
cd "$REPO"

TAG=${RIGMARKET_IMAGE_TAG:-$(node -p 'require("./package.json").version')}
DEBIAN_IMAGE=rigmarket/debian:bookworm
CTX=$INFRA_DIR/images
APPS=(identity-2fa marketplace-api instance-lifecycle sync-maintenance)
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(apps edge postgres kafka)

docker_answers || die "$T" "no Docker Engine answers on $DOCKER_HOST (start one: bash infra/docker/start.sh)"
# Without the buildx plugin the docker CLI falls back to the classic builder with a warning; ask for it.
docker buildx version >/dev/null 2>&1 || export DOCKER_BUILDKIT=0
mkdir -p "$CTX"

hash_of() { sha256sum | cut -c1-16; }
label_of() { docker image inspect --format "{{ index .Config.Labels \"io.rigmarket.recipe\" }}" "$1" 2>/dev/null || true; }
# build IMAGE DOCKERFILE CONTEXT [docker build args...]: quiet unless it fails
build() {
  local image=$1 file=$2 ctx=$3 log t0=$SECONDS
  shift 3
  log=$CTX/build-${image//[:\/]/_}.log
  if ! docker build -f "$file" -t "$image" "$@" "$ctx" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    die "$T" "docker build of $image failed (log: $log)"
  fi
  say "$T" "$image built ($((SECONDS - t0)) s)"
}

# 1. The Debian base: mmdebstrap (Debian's package) into a tarball, imported as an image. Rebuilt only when
#    the recipe below changes (it is kept in a label). Security updates are in the sources; rebuild the base
#    to take new ones (docker rmi rigmarket/debian:bookworm).
BASE_PACKAGES="ca-certificates,curl,passwd,procps"
BASE_MIRRORS=("deb http://deb.debian.org/debian bookworm main"
  "deb http://deb.debian.org/debian bookworm-updates main"
  "deb http://deb.debian.org/debian-security bookworm-security main")
base_recipe=$(printf '%s\n' minbase "$BASE_PACKAGES" "${BASE_MIRRORS[@]}" | hash_of)
if [ "$(label_of "$DEBIAN_IMAGE")" != "$base_recipe" ]; then
  command -v mmdebstrap >/dev/null || apt_install "$T" mmdebstrap
  say "$T" "making $DEBIAN_IMAGE with mmdebstrap (Debian 12 minbase + $BASE_PACKAGES; about a minute, once)"
  tarball=$CTX/debian-bookworm.tar
  rm -f "$tarball"
  mmdebstrap --quiet --variant=minbase --include="$BASE_PACKAGES" \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    bookworm "$tarball" "${BASE_MIRRORS[@]}" >"$CTX/mmdebstrap.log" 2>&1 ||
    { tail -n 30 "$CTX/mmdebstrap.log" >&2; die "$T" "mmdebstrap failed (log: $CTX/mmdebstrap.log)"; }
  docker import -c "LABEL io.rigmarket.recipe=$base_recipe" -c 'ENV LANG=C.UTF-8' -c 'CMD ["bash"]' \
    "$tarball" "$DEBIAN_IMAGE" >/dev/null
  rm -f "$tarball"
  say "$T" "$DEBIAN_IMAGE imported"
fi
base_id=$(docker image inspect --format '{{.Id}}' "$DEBIAN_IMAGE")

# 2. The apps: Node + production node_modules (an image per lockfile), then the compiled code.
build_apps() {
  local node_bin node_major deps_hash deps_image d
  node_bin=$(command -v node)
  node_major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$node_major" -ge 20 ] || die "$T" "Node $(node --version) found; the apps need Node 20 or newer"
  for d in "${APPS[@]}"; do
    [ -f "apps/$d/dist/main.js" ] || die "$T" "apps/$d/dist/main.js missing: build first (npx turbo run build)"
  done
  deps_hash=$({ cat package-lock.json; node --version; echo "$base_id"; cat deploy/docker/deps.Dockerfile; } | hash_of)
  deps_image=rigmarket/deps:$deps_hash
  if ! docker image inspect "$deps_image" >/dev/null 2>&1; then
    say "$T" "staging production node_modules (npm ci --omit=dev; package-lock.json changed or first run)"
    rm -rf "$CTX/deps-ctx"
    mkdir -p "$CTX/deps-ctx/deps"
    cp package.json package-lock.json "$CTX/deps-ctx/deps/"
    for d in packages/* apps/*; do
      mkdir -p "$CTX/deps-ctx/deps/$d"
      cp "$d/package.json" "$CTX/deps-ctx/deps/$d/"
    done
    (cd "$CTX/deps-ctx/deps" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error) \
      >"$CTX/npm-ci.log" 2>&1 || { tail -n 30 "$CTX/npm-ci.log" >&2; die "$T" "npm ci --omit=dev failed (log: $CTX/npm-ci.log)"; }
    # only node_modules goes into the image; the workspaces' package.json files come with the code
    find "$CTX/deps-ctx/deps" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
    cp "$node_bin" "$CTX/deps-ctx/node"
    build "$deps_image" deploy/docker/deps.Dockerfile "$CTX/deps-ctx" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE"
    rm -rf "$CTX/deps-ctx"
  fi
  # the compiled code of every workspace (a few MB): package.json + dist, and the OpenAPI document
  rm -rf "$CTX/app-ctx"
  mkdir -p "$CTX/app-ctx/app/docs"
  cp package.json "$CTX/app-ctx/app/"
  cp docs/openapi.json "$CTX/app-ctx/app/docs/"
  for d in packages/* apps/*; do
    # the web console's files are the edge's to serve (build_edge), not the apps'
    [ "$d" != apps/console ] || continue
    [ -d "$d/dist" ] || die "$T" "$d/dist missing: build first (npx turbo run build)"
    mkdir -p "$CTX/app-ctx/app/$d"
    cp "$d/package.json" "$CTX/app-ctx/app/$d/"
    cp -R "$d/dist" "$CTX/app-ctx/app/$d/dist"
  done
  find "$CTX/app-ctx/app" -name '*.tsbuildinfo' -delete
  # the embedded platform's first-start cluster (4-5 MB): no image runs the embedded platform
  find "$CTX/app-ctx/app" -name 'pglite-migrated-*.tar.gz' -delete
  for d in "${APPS[@]}"; do
    build "rigmarket/$d:$TAG" deploy/docker/app.Dockerfile "$CTX/app-ctx" --target "$d" \
      --build-arg "DEPS_IMAGE=$deps_image"
  done
  # superseded deps images (another lockfile) and the app images they left untagged take ~220 MB each
  docker images --format '{{.Repository}}:{{.Tag}}' rigmarket/deps | grep -vxF "$deps_image" |
    xargs -r docker rmi >/dev/null 2>&1 || true
  docker image prune -f --filter label=io.rigmarket.deps=1 >/dev/null 2>&1 || true
}

build_edge() {
  [ -f apps/console/dist/index.html ] || die "$T" "apps/console/dist missing: build first (npx turbo run build)"
  rm -rf "$CTX/edge-ctx"
  mkdir -p "$CTX/edge-ctx/edge/docs" "$CTX/edge-ctx/edge/apps/console"
  cp infra/nginx/nginx.conf.template deploy/docker/edge-entrypoint.sh "$CTX/edge-ctx/edge/"
  cp docs/openapi.json "$CTX/edge-ctx/edge/docs/"
  # the web console (docs/console.md), served by the edge at /
  cp -R apps/console/dist "$CTX/edge-ctx/edge/apps/console/dist"
  build "rigmarket/edge:$TAG" deploy/docker/edge.Dockerfile "$CTX/edge-ctx" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE"
}

build_postgres() {
  rm -rf "$CTX/postgres-ctx"
  mkdir -p "$CTX/postgres-ctx/postgres"
  cp deploy/docker/postgres-entrypoint.sh "$CTX/postgres-ctx/postgres/"
  build "rigmarket/postgres:$TAG" deploy/docker/postgres.Dockerfile "$CTX/postgres-ctx" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE"
}

build_kafka() {
  [ -f "$KAFKA_LIBS/.complete" ] ||
    die "$T" "Kafka $KAFKA_VERSION jars missing in $KAFKA_LIBS: fetch them first (bash scripts/infra.sh up)"
  rm -rf "$CTX/kafka-ctx"
  mkdir -p "$CTX/kafka-ctx/kafka"
  cp -R "$KAFKA_LIBS" "$CTX/kafka-ctx/kafka/libs"
  rm -f "$CTX/kafka-ctx/kafka/libs/.complete"
  cp infra/kafka/server.properties infra/kafka/log4j2.properties deploy/docker/kafka-entrypoint.sh "$CTX/kafka-ctx/kafka/"
  build "rigmarket/kafka:$TAG" deploy/docker/kafka.Dockerfile "$CTX/kafka-ctx" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE"
}

for w in "${wanted[@]}"; do
  case "$w" in
    apps) build_apps ;;
    edge) build_edge ;;
    postgres) build_postgres ;;
    kafka) build_kafka ;;
    *) die "$T" "unknown image set '$w' (apps, edge, postgres, kafka)" ;;
  esac
done
say "$T" "done: ${wanted[*]} tagged $TAG"
