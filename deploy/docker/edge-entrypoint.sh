#!/bin/bash
# Renders the edge's nginx.conf (the loopback edge's template, infra/nginx/nginx.conf.template) for a
# container: listen on every interface at $EDGE_PORT, the apps at $*_UPSTREAM (host:port), logs to
# stdout/stderr, everything nginx writes under /tmp/edge (the image runs as a non-root user), then runs
# nginx in the foreground.
set -euo pipefail
PREFIX=/tmp/edge
SRC=/srv/rigmarket
mkdir -p "$PREFIX/conf" "$PREFIX/logs" "$PREFIX/temp"
ln -sf /dev/stdout "$PREFIX/logs/access.log"
ln -sf /dev/stderr "$PREFIX/logs/error.log"
sed -e 's/@@USER_DIRECTIVE@@//' \
    -e "s/listen 127\.0\.0\.1:@@EDGE_PORT@@;/listen ${EDGE_PORT:?};/" \
    -e "s/127\.0\.0\.1:@@IDENTITY_PORT@@/${IDENTITY_UPSTREAM:?}/" \
    -e "s/127\.0\.0\.1:@@MARKETPLACE_PORT@@/${MARKETPLACE_UPSTREAM:?}/" \
    -e "s/127\.0\.0\.1:@@INSTANCE_PORT@@/${INSTANCE_UPSTREAM:?}/" \
    -e "s/127\.0\.0\.1:@@SYNC_PORT@@/${SYNC_UPSTREAM:?}/" \
    -e "s#@@REPO@@#$SRC#g" \
    "$SRC/nginx.conf.template" >"$PREFIX/conf/nginx.conf"
# A template that changed its placeholders would leave some unrendered, or an upstream on loopback.
if grep -n -e '@@' -e '127\.0\.0\.1' "$PREFIX/conf/nginx.conf" >&2; then
  echo "[edge] ERROR: the lines above of the rendered nginx.conf were not rendered for a container" >&2
  exit 1
fi
if [ "${1:-}" = "--render-only" ]; then cat "$PREFIX/conf/nginx.conf"; exit 0; fi
exec nginx -p "$PREFIX/" -c "$PREFIX/conf/nginx.conf" -e "$PREFIX/logs/error.log" -g 'daemon off;'
