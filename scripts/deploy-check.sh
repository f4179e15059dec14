#!/usr/bin/env bash
# The deployment check run by scripts/test.sh (docs/deployment.md, "What CI checks"):
#   1. Helm (built from the Go module proxy, cached in .infra/helm-<version>): `helm lint` and `helm template`
#      of deploy/helm/rigmarket, and assertions on the rendered manifests (scripts/deploy-manifests.js).
#   2. The images (scripts/images.sh: Debian base from mmdebstrap, no registry pull), then the whole
#      deploy/compose.yaml started under its own project name: every service healthy, and requests through
#      the edge reaching each app with the admin key (which the other apps learn over Kafka). Torn down after.
# Usage: bash scripts/deploy-check.sh [helm] [images] [compose]   (no argument: all three)
# Needs Docker and, for the compose part, docker compose (the plugin) or Debian's docker-compose.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=../infra/lib.sh
. "$REPO/infra/lib.sh"
# shellcheck source=../infra/docker/common.sh
. "$REPO/infra/docker/common.sh"
T=deploy-check
cd "$REPO"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(helm images compose)
has() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
CHART=deploy/helm/rigmarket
WORK=$INFRA_DIR/deploy-check
mkdir -p "$WORK"

# --- Helm from the Go module proxy --------------------------------------------------------------------------
HELM_VERSION=3.22.0
# Kubernetes version helm assumes without a cluster (its Makefile derives it from k8s.io/client-go v0.37 in
# helm 3.22.0's go.mod; a plain `go install` would leave the v1.20 fallback, which fails kubeVersion checks)
HELM_K8S_MINOR=37
# helm 3.22.0's go.mod asks for go 1.26.0
HELM_GO=1.26.0
HELM_DIR=$INFRA_DIR/helm-$HELM_VERSION
HELM=$HELM_DIR/helm

# go_at_least GO VERSION: the go binary is at least that version
go_at_least() {
  local have
  have=$("$1" env GOVERSION 2>/dev/null | sed 's/^go//') || return 1
  [ "$(printf '%s\n%s\n' "$2" "$have" | sort -V | head -n1)" = "$2" ]
}

install_helm() {
  local go="" toolchain
  [ -x "$HELM" ] && "$HELM" version --short 2>/dev/null | grep -q "v$HELM_VERSION" && return 0
  for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go; do
    if [ -n "$g" ] && [ -x "$g" ]; then go=$g; break; fi
  done
  if [ -n "$go" ] && go_at_least "$go" 1.21; then
    # go 1.21+ fetches the toolchain helm needs itself (golang.org/toolchain, from the module proxy)
    export GOTOOLCHAIN=go$HELM_GO+auto
  else
    # no Go, or one too old to switch toolchains (Debian 12's golang is 1.19): the toolchain module itself,
    # from the Go module proxy, unpacked once under .infra/
    toolchain=$INFRA_DIR/go-$HELM_GO
    if [ ! -x "$toolchain/bin/go" ]; then
      say "$T" "fetching the Go $HELM_GO toolchain from the Go module proxy"
      local zip=$WORK/toolchain.zip proxy=${GOPROXY:-https://proxy.golang.org}
      proxy=${proxy%%,*}
      curl -fsSL --retry 3 -o "$zip" "$proxy/golang.org/toolchain/@v/v0.0.1-go$HELM_GO.linux-amd64.zip" ||
        die "$T" "could not download the Go toolchain from $proxy"
      rm -rf "$toolchain.tmp" && mkdir -p "$toolchain.tmp"
      unzip -q "$zip" -d "$toolchain.tmp" && rm -f "$zip"
      mv "$toolchain.tmp/golang.org/toolchain@v0.0.1-go$HELM_GO.linux-amd64" "$toolchain"
      rm -rf "$toolchain.tmp"
      chmod -R u+x "$toolchain/bin" "$toolchain/pkg/tool"
    fi
    go=$toolchain/bin/go
    export GOTOOLCHAIN=local
  fi
  say "$T" "building helm v$HELM_VERSION from the Go module proxy into $HELM_DIR (a few minutes, once)"
  mkdir -p "$HELM_DIR"
  local ld="-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"
  ld+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$HELM_K8S_MINOR"
  ld+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_K8S_MINOR"
  GOBIN=$HELM_DIR GOFLAGS=-modcacherw CGO_ENABLED=0 "$go" install -trimpath -ldflags "$ld" \
    "helm.sh/helm/v3/cmd/helm@v$HELM_VERSION" >"$WORK/helm-build.log" 2>&1 ||
    { tail -n 30 "$WORK/helm-build.log" >&2; die "$T" "go install helm failed (log: $WORK/helm-build.log)"; }
  "$HELM" version --short | grep -q "v$HELM_VERSION" || die "$T" "$HELM does not report v$HELM_VERSION"
}

check_helm() {
  local t0=$SECONDS out
  install_helm
  "$HELM" lint --strict "$CHART" -f "$CHART/ci/ci-values.yaml" >"$WORK/helm-lint.log" 2>&1 ||
    { cat "$WORK/helm-lint.log" >&2; die "$T" "helm lint failed"; }
  "$HELM" template rm "$CHART" -f "$CHART/ci/ci-values.yaml" >"$WORK/rendered.yaml" 2>"$WORK/helm-template.log" ||
    { cat "$WORK/helm-template.log" >&2; die "$T" "helm template failed"; }
  node scripts/deploy-manifests.js "$WORK/rendered.yaml"
  # the chart refuses what cannot work, with a message naming the value
  refuse() { # MESSAGE-PART ARGS...: helm template must fail and say MESSAGE-PART
    local want=$1
    shift
    if out=$("$HELM" template rm "$CHART" "$@" 2>&1); then die "$T" "helm template accepted $* (expected a refusal: $want)"; fi
    grep -q -- "$want" <<<"$out" || die "$T" "helm template $* failed without naming $want: $out"
  }
  refuse "database.url" -f "$CHART/ci/ci-values.yaml" --set database.url=
  refuse "kafka.brokers" -f "$CHART/ci/ci-values.yaml" --set kafka.brokers=
  refuse "secrets.tfaKey" -f "$CHART/ci/ci-values.yaml" --set secrets.tfaKey=
  refuse "instance-lifecycle must run as one replica" -f "$CHART/ci/ci-values.yaml" --set 'apps.instance-lifecycle.replicas=2'
  # existing Secrets: none of the chart's own secret values is rendered, and DATABASE_URL comes from the named key
  "$HELM" template rm "$CHART" --set kafka.brokers=k:9092 --set secrets.existingSecret=my-keys \
    --set database.existingSecret=my-db --set database.existingSecretKey=url >"$WORK/rendered-existing.yaml" ||
    die "$T" "helm template with existing secrets failed"
  node scripts/deploy-manifests.js "$WORK/rendered-existing.yaml" --existing-secrets
  say "$T" "helm v$HELM_VERSION: lint, template and manifest checks passed ($((SECONDS - t0)) s)"
}

# --- images and compose -------------------------------------------------------------------------------------
TAG=${RIGMARKET_IMAGE_TAG:-$(node -p 'require("./package.json").version')}
PROJECT=rigmarket-deploy-check
# the compose network of the check; the host reaches the edge at its fixed address on it
SUBNET=${DEPLOY_CHECK_SUBNET:-172.30.58.0/24}
EDGE_ADDRESS=${DEPLOY_CHECK_EDGE_ADDRESS:-172.30.58.10}

compose() {
  if docker compose version >/dev/null 2>&1; then
    docker compose "$@"
  else
    command -v docker-compose >/dev/null || apt_install "$T" docker-compose
    docker-compose "$@"
  fi
}

COMPOSE_ENV=$WORK/compose.env
dc() { compose --env-file "$COMPOSE_ENV" -p "$PROJECT" -f deploy/compose.yaml "$@"; }
# at exit, pass or fail: keep the services' logs, remove the project and its volumes, keep the exit status
compose_cleanup() {
  local rc=$?
  dc logs --no-color >"$WORK/compose.log" 2>&1 || true
  dc down -v --remove-orphans >/dev/null 2>&1 || say "$T" "WARNING: docker compose down of project $PROJECT failed"
  exit "$rc"
}

check_compose() {
  local t0=$SECONDS admin="deploy-check-$RANDOM$RANDOM" edge="http://$EDGE_ADDRESS:8080" ok=0
  key() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
  (
    umask 077
    printf 'POSTGRES_PASSWORD=%s\nRIGMARKET_TFA_KEY=%s\nRIGMARKET_INSTANCE_SEAL_KEY=%s\nRIGMARKET_REGISTRY_KEY=%s\n' \
      "$(key)" "$(key)" "$(key)" "$(key)"
    printf 'RIGMARKET_ADMIN_KEY=%s\nRIGMARKET_IMAGE_TAG=%s\nRIGMARKET_SUBNET=%s\nRIGMARKET_EDGE_ADDRESS=%s\n' \
      "$admin" "$TAG" "$SUBNET" "$EDGE_ADDRESS"
    # a free loopback port for the published edge (the check itself talks to the edge's network address)
    printf 'RIGMARKET_EDGE_PORT=%s\n' "$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  ) >"$COMPOSE_ENV"
  dc config -q || die "$T" "docker compose config rejected deploy/compose.yaml"
  # a previous run that was killed may have left its project behind
  dc down -v --remove-orphans >/dev/null 2>&1 || true
  trap compose_cleanup EXIT
  say "$T" "starting deploy/compose.yaml (project $PROJECT: PostgreSQL, Kafka, four apps, edge)"
  dc up -d >"$WORK/compose-up.log" 2>&1 ||
    { tail -n 20 "$WORK/compose-up.log" >&2; dc logs --no-color --tail 30 >&2 || true; die "$T" "docker compose up failed (a service did not become healthy)"; }
  # the edge answers, and each app answers through it with the admin key: identity-2fa made the key, the
  # other three learned it from identity's events over Kafka
  # `up -d` waits for the apps to be healthy (the edge depends on them), not for nginx in the edge to listen:
  # a first look right after it can be refused (seen in CI once), so the edge gets up to 30 s
  local edge_up=0
  for _ in $(seq 1 30); do
    if curl -fsS -m 10 "$edge/healthz" 2>/dev/null | grep -q '"edge":"ok"'; then edge_up=1; break; fi
    sleep 1
  done
  [ "$edge_up" = 1 ] || die "$T" "edge /healthz did not answer within 30 s (logs: $WORK/compose.log)"
  local path want
  for path_want in 'users/current/|"is_admin":true' 'machines/|"machines":[]' 'instances/|"instances":[]' \
    'machines/maintenances/|[]'; do
    path=${path_want%%|*} want=${path_want#*|}
    for _ in $(seq 1 30); do
      if curl -fsS -m 10 -H "Authorization: Bearer $admin" "$edge/api/v0/$path" 2>/dev/null | grep -qF "$want"; then ok=$((ok + 1)); break; fi
      sleep 1
    done
  done
  [ "$ok" = 4 ] || die "$T" "only $ok of 4 apps answered through the edge with the admin key (logs: $WORK/compose.log)"
  curl -fsS -m 10 -o /dev/null "$edge/api/v0/openapi.json" || die "$T" "edge does not serve /api/v0/openapi.json"
  curl -fsS -m 10 "$edge/" | grep -qi '<!doctype html' || die "$T" "edge does not serve the web console at /"
  # the apps trust the edge's X-Forwarded-For (RIGMARKET_TRUSTED_PROXIES): a key made through it is audited
  # with this host's address on the compose network, not the edge's
  local gateway audit
  gateway=$(docker network inspect --format '{{ (index .IPAM.Config 0).Gateway }}' "${PROJECT}_rigmarket")
  [ -n "$gateway" ] || gateway=${SUBNET%.*}.1
  curl -fsS -m 10 -X POST -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
    -d '{"name":"deploy-check","permissions":{"api":{"user_read":{}}}}' "$edge/api/v0/auth/apikeys/" >/dev/null ||
    die "$T" "could not create an API key through the edge"
  audit=$(curl -fsS -m 10 -H "Authorization: Bearer $admin" "$edge/api/v0/audit_logs/")
  grep -qF "\"ip_address\":\"$gateway\"" <<<"$audit" ||
    die "$T" "the audit log does not name the client ($gateway) behind the edge: $(grep -o '"ip_address":"[^"]*"' <<<"$audit" | sort -u | tr '\n' ' ')"
  say "$T" "compose: all services healthy, the four apps answer through the edge ($((SECONDS - t0)) s)"
}

has helm && check_helm
if has images || has compose; then
  docker_answers || die "$T" "no Docker Engine answers on $DOCKER_HOST (bash infra/docker/start.sh)"
fi
if has images; then
  t0=$SECONDS
  bash scripts/images.sh
  # the app images run this machine's Node in production mode on every interface; the edge image renders
  # its nginx.conf for a container (the compose part below starts them all)
  out=$(docker run --rm "rigmarket/marketplace-api:$TAG" node -e 'console.log(process.version, process.env.NODE_ENV, process.env.HOST)')
  [[ "$out" == v2* ]] && [[ "$out" == *"production 0.0.0.0"* ]] || die "$T" "unexpected runtime in rigmarket/marketplace-api:$TAG: $out"
  docker run --rm --entrypoint /srv/rigmarket/edge-entrypoint.sh "rigmarket/edge:$TAG" --render-only >"$WORK/edge-nginx.conf" ||
    die "$T" "the edge image could not render its nginx.conf"
  say "$T" "images built and checked ($((SECONDS - t0)) s)"
fi
has compose && check_compose
say "$T" "passed: ${parts[*]}"
