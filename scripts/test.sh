#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs and starts what the tests need (PostgreSQL from
# Debian's packages, Kafka from Maven Central jars; idempotent), builds, then runs every jest project.
# Extra arguments go to jest (e.g. `npm test -- --selectProjects unit`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n== %s\n' "$*"; }

if [ ! -d node_modules/.bin ] || [ ! -e node_modules/@rigmarket/contracts ]; then
  step "installing npm packages (npm install)"
  npm install --no-audit --no-fund
fi

step "starting PostgreSQL and Kafka on loopback (scripts/infra.sh up)"
bash scripts/infra.sh up
# shellcheck disable=SC1091
. .infra/env
# Topics older test runs left on this broker (each test has a namespace of its own): a broker with thousands
# of them starts slowly. Housekeeping only: never fails the run.
node scripts/kafka-prune-test-topics.js || true

step "installing the real vastai CLI for client-compatibility tests"
bash scripts/vastai-cli.sh

step "installing schemathesis for the OpenAPI conformance run (scripts/schemathesis.sh)"
bash scripts/schemathesis.sh

step "installing Debian's Chromium for the browser tests (scripts/chromium.sh)"
bash scripts/chromium.sh

step "installing Debian's rclone for the cloud-copy tests (scripts/rclone.sh)"
bash scripts/rclone.sh

step "building (turbo)"
npx turbo run build --output-logs=errors-only

step "type-checking everything, tests included (tsc)"
npx tsc -p tsconfig.json

step "linting (eslint)"
npx eslint . --max-warnings 0

step "checking formatting (prettier --check)"
npx prettier --check . --log-level warn

step "running the tests (jest: unit, int, e2e)"
mkdir -p .infra
results=.infra/jest-results.json
rm -f "$results"
status=0
# PGlite loads its WebAssembly with a dynamic import, which jest's VM allows only with this flag.
# One file at a time, but in a worker jest replaces once a file leaves its heap over 700 MB: every file leaves
# memory its module registry never frees, and in one long-lived process (--runInBand) the later files ran
# 3-5 times slower under the garbage collector.
NODE_ENV=test NODE_OPTIONS="${NODE_OPTIONS:-} --experimental-vm-modules --no-warnings" \
  npx jest --maxWorkers=1 --workerIdleMemoryLimit=700MB --forceExit --ci --json --outputFile="$results" "$@" || status=$?

# The benchmark suite once, in short mode (tiny sizes, a few seconds): only that it runs. No timing is judged
# in CI; the figures are meaningless at these sizes (docs/benchmarks.md).
step "benchmark suite, short mode (bench/run.js --short)"
node bench/run.js --short >/dev/null || status=1

# Container images, docker compose and the Helm chart (docs/deployment.md): helm lint/template with checks on
# the manifests, the images built on the local Docker Engine, the whole compose started and probed.
step "deployment: Helm chart, images, docker compose (scripts/deploy-check.sh)"
bash scripts/deploy-check.sh || status=1

# One plain closing line any CI reader understands.
if [ -f "$results" ]; then
  node -e '
    const r = require(process.argv[1]);
    console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
    if (process.env.CI === "true" && r.numPendingTests + r.numTodoTests > 0) { console.error("CI=true: skipped tests are failures"); process.exit(1); }
    if (r.numTotalTests === 0) { console.error("no test ran"); process.exit(1); }
  ' "$PWD/$results" || status=1
fi
exit "$status"
