#!/usr/bin/env bash
# Installs what a fresh clone needs before building, testing or starting tkube.
#   --with-etcd  also install Debian's etcd-server (used by the etcd3 tests) when absent and root
#   --quiet      print nothing when there is nothing to do
set -euo pipefail
cd "$(dirname "$0")/.."

with_etcd=0 quiet=0
for arg in "$@"; do
  case "$arg" in
    --with-etcd) with_etcd=1 ;;
    --quiet) quiet=1 ;;
    *) echo "setup.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done
say() { [ "$quiet" = 1 ] || echo "setup: $*"; }

# npm packages: install when node_modules is missing or older than the lockfile.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages"
  # npm install, not npm ci: this npm's ci refuses lock files that leave out other
  # platforms' optional packages (msgpackr-extract), which npm itself writes that way.
  npm install --no-audit --no-fund
fi

if [ "$with_etcd" = 1 ] && ! command -v etcd >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian's etcd-server"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || true
    apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
    # The package may start a system etcd on 2379; tests start their own on free ports.
    if command -v service >/dev/null 2>&1; then service etcd stop >/dev/null 2>&1 || true; fi
  else
    echo "setup: etcd is not installed and cannot be installed here (need root and apt-get); etcd3 tests will be skipped" >&2
  fi
fi
