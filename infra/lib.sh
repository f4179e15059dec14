# shellcheck shell=bash
# Shared helpers for the infra/*/start.sh and stop.sh scripts. Source it; do not run it.
#   REPO       repository root (absolute)
#   INFRA_DIR  where all service data lives ($REPO/.infra, gitignored); override with INFRA_DIR=...

REPO=${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)}
INFRA_DIR=${INFRA_DIR:-$REPO/.infra}

# say TAG MESSAGE...: one short progress line on stderr
say() { local tag=$1; shift; printf '[%s] %s\n' "$tag" "$*" >&2; }
# die TAG MESSAGE...: print a loud error and exit 1
die() { local tag=$1; shift; printf '[%s] ERROR: %s\n' "$tag" "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

# port_open HOST PORT: true if something accepts TCP connections there (bash /dev/tcp, no nc needed)
port_open() {
  (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# proc_alive PID: true if the process exists and is not a zombie (an orphan killed with -9 can stay a
# zombie for a while when PID 1 is slow to reap it, and kill -0 still succeeds on zombies)
proc_alive() {
  local st
  kill -0 "$1" 2>/dev/null || return 1
  [ -r "/proc/$1/stat" ] || return 0
  st=$(sed -E 's/^.*\) ([A-Za-z]).*$/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ "$st" != Z ] && [ "$st" != X ]
}

# pid_alive PIDFILE: true if the file holds the pid of a live process
pid_alive() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(head -n1 "$1" 2>/dev/null | tr -dc '0-9')
  [ -n "$pid" ] && proc_alive "$pid"
}

# apt_install TAG PKG...: install Debian packages. Runs `apt-get update` first (only called when an
# install is actually needed). Services that the packages' postinst would start (the Debian "main"
# PostgreSQL cluster on 5432, the system nginx on port 80) are NOT started: a temporary
# /usr/sbin/policy-rc.d answers 101 during the install, unless that file already exists. It waits up to
# 5 minutes for another apt-get (another checkout's install) to release the dpkg lock.
apt_install() {
  local tag=$1; shift
  is_root || die "$tag" "packages missing ($*) and not running as root: install them with: sudo apt-get install -y $*"
  command -v apt-get >/dev/null || die "$tag" "packages missing ($*) and apt-get is not available"
  say "$tag" "installing Debian packages: $* (apt-get update + install; slow, once per machine)"
  local made_policy=0 rc=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    made_policy=1
  fi
  {
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$@"
  } >"${TMPDIR:-/tmp}/rigmarket-apt.log" 2>&1 || rc=$?
  if [ "$made_policy" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
  if [ "$rc" -ne 0 ]; then
    tail -n 30 "${TMPDIR:-/tmp}/rigmarket-apt.log" >&2 || true
    die "$tag" "apt-get install $* failed (rc=$rc); full log: ${TMPDIR:-/tmp}/rigmarket-apt.log"
  fi
}

# take_lock TAG FILE: serialize concurrent start/stop runs of one service (fd 9, released at exit).
# Commands that leave a daemon behind must close it (9>&-) so the daemon does not keep the lock.
take_lock() {
  mkdir -p "$(dirname "$2")"
  exec 9>"$2"
  if command -v flock >/dev/null; then
    flock -w "${INFRA_LOCK_TIMEOUT:-300}" 9 || die "$1" "another start/stop still holds $2"
  fi
}

# wait_gone PID SECONDS: wait until the process exits; returns 1 if it is still alive afterwards
wait_gone() {
  local pid=$1 i
  for ((i = 0; i < $2 * 2; i++)); do
    proc_alive "$pid" || return 0
    sleep 0.5
  done
  ! proc_alive "$pid"
}
