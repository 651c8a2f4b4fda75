#!/usr/bin/env bash
# Builds the offline OCI images a node needs, with no network, from Debian's dynamically linked
# busybox with the shared libraries it loads and glibc's NSS modules, so name lookups through
# /etc/hosts and /etc/resolv.conf work in a container:
#   busybox.oci.tar  docker.io/library/busybox:latest and :1.35 — busybox with every applet
#                    linked (kubectl cp needs tar), a wget that survives -T (see wget_wrapper),
#                    /etc/passwd, /etc/group, /etc/nsswitch.conf, a writable /tmp
#   pause.oci.tar    registry.k8s.io/pause:3.10 — the pod sandbox image (sleeps until killed)
# Each archive is an OCI image layout that `ctr -n k8s.io images import` takes.
# The busybox binary: $BUSYBOX if set, else /bin/busybox when it is the dynamic one (Debian's
# `busybox` installed), else extracted from Debian's busybox_*.deb ($BUSYBOX_DEB, or the one
# scripts/setup.sh downloads into /var/cache/apt/archives).
# Usage: scripts/build-images.sh OUTDIR   (prints nothing when the archives are already there)
set -euo pipefail
out=${1:?usage: build-images.sh OUTDIR}
mkdir -p "$out"
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

dynamic() { [ -x "$1" ] && ldd "$1" >/dev/null 2>&1; }
busybox=${BUSYBOX:-}
if [ -z "$busybox" ] && dynamic /bin/busybox; then busybox=/bin/busybox; fi
if [ -z "$busybox" ]; then
  deb=${BUSYBOX_DEB:-$(ls /var/cache/apt/archives/busybox_*_"$arch".deb 2>/dev/null | sort -V | tail -n1)}
  [ -n "$deb" ] && [ -s "$deb" ] || {
    echo "build-images: no dynamically linked busybox: run scripts/setup.sh --with-runtime (it downloads Debian's busybox package) or set BUSYBOX_DEB" >&2
    exit 3
  }
  dpkg-deb -x "$deb" "$work/deb"
  busybox=$work/deb/bin/busybox
fi
dynamic "$busybox" || { echo "build-images: $busybox is not a dynamically linked executable" >&2; exit 3; }

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }

# blob FILE: stores FILE under blobs/sha256/<digest> of the layout in $lay; prints the digest.
blob() {
  local d
  d=$(sha "$1")
  mkdir -p "$lay/blobs/sha256"
  cp "$1" "$lay/blobs/sha256/$d"
  echo "$d"
}

# image NAME ARCHIVE ROOTFS CONFIG_JSON(process part) REFNAMES...
image() {
  local archive=$1 rootfs=$2 procconf=$3
  shift 3
  lay="$work/layout-$(basename "$archive")"
  rm -rf "$lay"
  mkdir -p "$lay"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$work/layer.tar" -C "$rootfs" .
  local diff
  diff=$(sha "$work/layer.tar")
  gzip -n -c "$work/layer.tar" >"$work/layer.tar.gz"
  local layer
  layer=$(blob "$work/layer.tar.gz")
  printf '{"architecture":"%s","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$arch" "$procconf" "$diff" >"$work/config.json"
  local config
  config=$(blob "$work/config.json")
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%d}]}' \
    "$config" "$(size "$work/config.json")" "$layer" "$(size "$work/layer.tar.gz")" >"$work/manifest.json"
  local manifest msize entries="" name
  manifest=$(blob "$work/manifest.json")
  msize=$(size "$work/manifest.json")
  for name in "$@"; do
    [ -n "$entries" ] && entries="$entries,"
    entries="$entries{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"sha256:$manifest\",\"size\":$msize,\"annotations\":{\"io.containerd.image.name\":\"$name\",\"org.opencontainers.image.ref.name\":\"${name##*:}\"}}"
  done
  printf '{"schemaVersion":2,"manifests":[%s]}' "$entries" >"$lay/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$lay/oci-layout"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$archive.$$.tmp" -C "$lay" .
  mv "$archive.$$.tmp" "$archive"
}

# BIN ROOT: busybox at ROOT/bin/busybox with every library it loads (ldd) at the same path and
# glibc's NSS modules for "files" and "dns" (dlopened by getaddrinfo, so ldd does not list them).
with_libs() {
  local r=$1 lib libc nss
  mkdir -p "$r/bin"
  cp "$busybox" "$r/bin/busybox"
  for lib in $(ldd "$busybox" | grep -o '/[^ ]*'); do
    mkdir -p "$r$(dirname "$lib")"
    cp -L "$lib" "$r$lib"
  done
  # The NSS modules sit beside libc.
  libc=$(ldd "$busybox" | grep -o '/[^ ]*/libc\.so\.[0-9]*')
  for nss in libnss_files.so.2 libnss_dns.so.2; do
    lib=$(dirname "$libc")/$nss
    [ -e "$lib" ] && cp -L "$lib" "$r$lib"
  done
}

# Debian builds busybox 1.35 without FEATURE_WGET_TIMEOUT, yet wget still parses -T into a null
# pointer and crashes (tutorials use `wget --spider --timeout=1`). The image's wget
# takes -T N / -TN / --timeout=N / --timeout N itself and runs busybox wget under `timeout`.
wget_wrapper() {
  cat <<'SH'
#!/bin/sh
t=
n=$#
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  n=$((n - 1))
  case $a in
    -T | --timeout) t=$1; shift; n=$((n - 1)) ;;
    -T*) t=${a#-T} ;;
    --timeout=*) t=${a#--timeout=} ;;
    *) set -- "$@" "$a" ;;
  esac
done
[ -n "$t" ] && exec timeout "$t" /bin/busybox wget "$@"
exec /bin/busybox wget "$@"
SH
}

# The busybox root: every applet linked, a passwd and group with root and nobody, name lookups
# in /etc/hosts then DNS (the kubelet mounts both files), writable /tmp.
rootfs() {
  local r=$1
  mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc" "$r/tmp" "$r/root" "$r/proc" "$r/sys" \
    "$r/dev" "$r/var/www" "$r/home"
  chmod 1777 "$r/tmp"
  with_libs "$r"
  local app
  for app in $("$busybox" --list-full); do
    [ "$app" = bin/busybox ] && continue
    [ -e "$r/$app" ] || ln -s /bin/busybox "$r/$app"
  done
  rm -f "$r/usr/bin/wget" # the applet's link: the wrapper replaces it
  wget_wrapper >"$r/usr/bin/wget"
  chmod 755 "$r/usr/bin/wget"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$r/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\nnetworks: files\n' >"$r/etc/nsswitch.conf"
}

path_env='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'
if [ ! -s "$out/busybox.oci.tar" ]; then
  rootfs "$work/busybox"
  image "$out/busybox.oci.tar" "$work/busybox" "{$path_env,\"Cmd\":[\"sh\"]}" \
    docker.io/library/busybox:latest docker.io/library/busybox:1.35
fi
if [ ! -s "$out/pause.oci.tar" ]; then
  mkdir -p "$work/pause/bin" "$work/pause/proc" "$work/pause/dev" "$work/pause/sys"
  with_libs "$work/pause"
  # The sandbox's only process: sleeps until the runtime kills it (SIGKILL when the sandbox stops).
  image "$out/pause.oci.tar" "$work/pause" "{$path_env,\"Entrypoint\":[\"/bin/busybox\",\"sleep\",\"inf\"]}" \
    registry.k8s.io/pause:3.10
fi
