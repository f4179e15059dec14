#!/usr/bin/env bash
# Debian's rclone for cloud copies (`vastai cloud copy`): the host agent runs it on the host, never inside a
# container, and the cloud-copy tests drive it against a local S3 server (s3rver). Idempotent: installs the
# `rclone` package only when no rclone is on the PATH.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=../infra/lib.sh
. "$REPO/infra/lib.sh"
if command -v rclone >/dev/null 2>&1; then exit 0; fi
apt_install rclone rclone
command -v rclone >/dev/null || die rclone "the rclone package installed no rclone command"
