#!/usr/bin/env bash
# Import $TEST_IMAGE (default rigmarket/busybox:latest) into the engine unless it is there: a root file
# system made of Debian's busybox-static with every applet linked, so `sh`, `sleep`, `tar`, `nc` work.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=docker

if docker image inspect "$TEST_IMAGE" >/dev/null 2>&1; then
  say "$T" "image $TEST_IMAGE present"
  exit 0
fi
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || die "$T" "busybox not found (Debian package busybox-static)"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/tmp" "$root/root" "$root/etc" "$root/workspace"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
tar -C "$root" -c . | docker import -c 'CMD ["sh"]' -c 'ENV PATH=/bin' - "$TEST_IMAGE" >/dev/null
say "$T" "imported $TEST_IMAGE from $busybox"
