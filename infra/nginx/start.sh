#!/usr/bin/env bash
# Start (installing Debian nginx if needed) the distributed-mode edge on 127.0.0.1:${EDGE_PORT:-8080}.
# Renders infra/nginx/nginx.conf.template into .infra/nginx/conf/nginx.conf, validates it with nginx -t,
# and runs `nginx -p .infra/nginx/ -c .infra/nginx/conf/nginx.conf` (pid, logs, temp dirs all there).
# Upstreams on 127.0.0.1: identity-2fa ${IDENTITY_PORT:-8081}, marketplace-api ${MARKETPLACE_PORT:-8082},
# instance-lifecycle ${INSTANCE_PORT:-8083}, sync-maintenance ${SYNC_PORT:-8084}.
# Idempotent: when our nginx already runs, the config is re-rendered and reloaded.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=common.sh
. "$HERE/common.sh"
T=nginx

if ! NGINX=$(find_nginx); then
  apt_install "$T" nginx
  NGINX=$(find_nginx) || die "$T" "nginx installed but not found"
fi

take_lock "$T" "$NGINX_PREFIX/start.lock"
mkdir -p "$NGINX_PREFIX/conf" "$NGINX_PREFIX/logs" "$NGINX_PREFIX/temp"
user_directive=""
if is_root; then
  # workers drop root; Debian has no group "nobody", which nginx's default `user nobody nobody` needs
  if id www-data >/dev/null 2>&1; then user_directive="user www-data;"; else user_directive="user nobody nogroup;"; fi
fi
sed -e "s/@@USER_DIRECTIVE@@/$user_directive/" \
    -e "s/@@EDGE_PORT@@/$EDGE_PORT/g" -e "s/@@IDENTITY_PORT@@/$IDENTITY_PORT/g" \
    -e "s/@@MARKETPLACE_PORT@@/$MARKETPLACE_PORT/g" -e "s/@@INSTANCE_PORT@@/$INSTANCE_PORT/g" \
    -e "s/@@SYNC_PORT@@/$SYNC_PORT/g" -e "s#@@REPO@@#$REPO#g" \
    "$HERE/nginx.conf.template" > "$NGINX_CONF.new"
if grep -q '@@' "$NGINX_CONF.new"; then die "$T" "unrendered placeholder in $NGINX_CONF.new"; fi
mv "$NGINX_CONF.new" "$NGINX_CONF"
ngx -t -q 2>"$NGINX_PREFIX/logs/configtest.log" ||
  { cat "$NGINX_PREFIX/logs/configtest.log" >&2; die "$T" "nginx -t rejected $NGINX_CONF"; }

edge_ok() { curl -fsS -m 3 -o /dev/null "http://127.0.0.1:$EDGE_PORT/healthz" 2>/dev/null; }

if pid_alive "$NGINX_PIDFILE"; then
  ngx -s reload 9>&- || die "$T" "nginx -s reload failed (see $NGINX_PREFIX/logs/error.log)"
  for _ in $(seq 1 20); do edge_ok && break; sleep 0.25; done
  edge_ok || die "$T" "running (pid $(cat "$NGINX_PIDFILE")) but http://127.0.0.1:$EDGE_PORT/healthz does not answer"
  say "$T" "already running (pid $(cat "$NGINX_PIDFILE")); config re-rendered and reloaded"
  exit 0
fi
if port_open 127.0.0.1 "$EDGE_PORT"; then
  die "$T" "127.0.0.1:$EDGE_PORT is taken by another process; stop it or set EDGE_PORT"
fi

say "$T" "starting edge on 127.0.0.1:$EDGE_PORT ($("$NGINX" -v 2>&1 | sed 's/.*: //'); conf: $NGINX_CONF)"
ngx 9>&- || { tail -n 20 "$NGINX_PREFIX/logs/error.log" >&2 2>/dev/null || true; die "$T" "nginx failed to start"; }
for _ in $(seq 1 40); do edge_ok && break; sleep 0.25; done
edge_ok || { tail -n 20 "$NGINX_PREFIX/logs/error.log" >&2 2>/dev/null || true; die "$T" "edge does not answer on 127.0.0.1:$EDGE_PORT"; }
say "$T" "ready: http://127.0.0.1:$EDGE_PORT (identity $IDENTITY_PORT, marketplace $MARKETPLACE_PORT, instance $INSTANCE_PORT, sync $SYNC_PORT)"
