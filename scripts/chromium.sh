#!/usr/bin/env bash
# Debian's Chromium for the browser tests (playwright-core drives it through `executablePath`; no browser is
# ever downloaded). Idempotent: installs the `chromium` package only when no chromium is on the PATH.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=../infra/lib.sh
. "$REPO/infra/lib.sh"
if command -v chromium >/dev/null 2>&1; then exit 0; fi
apt_install chromium chromium
command -v chromium >/dev/null || die chromium "the chromium package installed no chromium command"
