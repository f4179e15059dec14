# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the scripts that source this file
# Shared by infra/nginx/start.sh, stop.sh and test-routing.sh. Source it after infra/lib.sh.
EDGE_PORT=${EDGE_PORT:-8080}
IDENTITY_PORT=${IDENTITY_PORT:-8081}
MARKETPLACE_PORT=${MARKETPLACE_PORT:-8082}
INSTANCE_PORT=${INSTANCE_PORT:-8083}
SYNC_PORT=${SYNC_PORT:-8084}
NGINX_PREFIX=${NGINX_PREFIX:-$INFRA_DIR/nginx}
NGINX_CONF=$NGINX_PREFIX/conf/nginx.conf
NGINX_PIDFILE=$NGINX_PREFIX/nginx.pid

find_nginx() {
  local n
  for n in "${NGINX_BIN:-}" "$(command -v nginx 2>/dev/null || true)" /usr/sbin/nginx; do
    if [ -n "$n" ] && [ -x "$n" ]; then echo "$n"; return 0; fi
  done
  return 1
}

# ngx ARGS...: nginx with our prefix, config and error log (never the system ones)
ngx() { "$NGINX" -p "$NGINX_PREFIX/" -c "$NGINX_CONF" -e "$NGINX_PREFIX/logs/error.log" "$@"; }
