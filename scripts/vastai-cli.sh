#!/usr/bin/env bash
# Installs the real `vastai` CLI (PyPI) into .infra/vastai-venv, once; tests drive it against our server.
#   scripts/vastai-cli.sh install   -> prints nothing but progress; idempotent
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VERSION=${VASTAI_VERSION:-1.9.1}
VENV=.infra/vastai-venv
if [ -x "$VENV/bin/vastai" ] && [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("vastai"))' 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
echo "installing vastai==$VERSION from PyPI into $VENV"
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "vastai==$VERSION"
"$VENV/bin/vastai" --help >/dev/null
