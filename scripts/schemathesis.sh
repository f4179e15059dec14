#!/usr/bin/env bash
# Installs schemathesis (PyPI) into .infra/schemathesis-venv, once; apps/platform/src/schemathesis.e2e-spec.ts
# runs it against the embedded platform's OpenAPI document.
#   scripts/schemathesis.sh   -> prints nothing but progress; idempotent
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VERSION=${SCHEMATHESIS_VERSION:-4.32.5}
VENV=.infra/schemathesis-venv
if [ -x "$VENV/bin/schemathesis" ] && [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
echo "installing schemathesis==$VERSION from PyPI into $VENV"
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION"
"$VENV/bin/schemathesis" --version >/dev/null
