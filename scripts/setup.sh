#!/usr/bin/env bash
# Installs what a fresh clone needs before building, testing or starting tkube.
#   --with-runtime  also install the container runtime of real pods when absent and root:
#                   Debian's containerd, runc, containernetworking-plugins, skopeo, docker-registry
#                   (the cluster's image registry, every node's mirror), and Debian's
#                   busybox package downloaded (not installed: it conflicts with busybox-static)
#                   into apt's archive cache, which scripts/build-images.sh builds the images from;
#                   and what the service proxy programs the kernel with: nftables (nft),
#                   iptables (the fallback) and conntrack (stale UDP flows)
#   --with-etcd     also install what the tests need: the runtime above, Debian's etcd-server
#                   (the etcd3 tests) and python3-kubernetes (the Python client tests)
#   --quiet         print nothing when there is nothing to do
set -euo pipefail
cd "$(dirname "$0")/.."

with_runtime=0 with_tests=0 quiet=0
for arg in "$@"; do
  case "$arg" in
    --with-runtime) with_runtime=1 ;;
    --with-etcd) with_tests=1 with_runtime=1 ;;
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

# Debian packages: "<package>:<file it provides>" for each one wanted and missing.
wanted=()
if [ "$with_runtime" = 1 ]; then
  wanted+=(containerd:/usr/bin/containerd runc:/usr/sbin/runc containernetworking-plugins:/usr/lib/cni/bridge
    skopeo:/usr/bin/skopeo iproute2:/sbin/ip docker-registry:/usr/bin/docker-registry
    nftables:/usr/sbin/nft iptables:/usr/sbin/iptables-restore conntrack:/usr/sbin/conntrack)
fi
if [ "$with_tests" = 1 ]; then
  wanted+=(etcd-server:/usr/bin/etcd
    python3-kubernetes:/usr/lib/python3/dist-packages/kubernetes/__init__.py)
fi
missing=()
for w in "${wanted[@]}"; do
  [ -e "${w#*:}" ] || missing+=("${w%%:*}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian's ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || true
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # Packages may start system services; tkube and the tests start their own on private ports/sockets.
    if command -v service >/dev/null 2>&1; then
      for s in etcd containerd docker-registry; do service "$s" stop >/dev/null 2>&1 || true; done
    fi
  else
    echo "setup: ${missing[*]} not installed and cannot be installed here (need root and apt-get); the tests that need them are skipped, and tkube up uses the fake runtime" >&2
  fi
fi

# The offline images' busybox: Debian's dynamically linked one (installed, or its .deb in apt's cache).
if [ "$with_runtime" = 1 ] && ! ldd /bin/busybox >/dev/null 2>&1 &&
  ! ls /var/cache/apt/archives/busybox_*.deb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "downloading Debian's busybox package for the offline images"
    # Package lists may be missing or stale on a fresh machine: update once and try again.
    (cd /var/cache/apt/archives && { apt-get download -qq busybox >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null && apt-get download -qq busybox >/dev/null; }; }) ||
      echo "setup: Debian's busybox package could not be downloaded; real-containerd tests are skipped" >&2
  else
    echo "setup: Debian's busybox package cannot be downloaded here; real-containerd tests are skipped" >&2
  fi
fi
