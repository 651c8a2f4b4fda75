#!/usr/bin/env bash
# Builds the offline OCI images a node needs, from Debian's busybox-static, with no network:
#   busybox.oci.tar  docker.io/library/busybox:latest and :1.35 — busybox with every applet
#                    linked (kubectl cp needs tar), /etc/passwd and /etc/group, a writable /tmp
#   pause.oci.tar    registry.k8s.io/pause:3.10 — the pod sandbox image (sleeps until killed)
# Each archive is an OCI image layout that `ctr -n k8s.io images import` takes.
# Usage: scripts/build-images.sh OUTDIR   (prints nothing when the archives are already there)
set -euo pipefail
out=${1:?usage: build-images.sh OUTDIR}
busybox=${BUSYBOX:-/bin/busybox}
[ -x "$busybox" ] || { echo "build-images: $busybox not found (apt-get install busybox-static)" >&2; exit 1; }
mkdir -p "$out"
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

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

# The busybox root: every applet linked, a passwd and group with root and nobody, writable /tmp.
rootfs() {
  local r=$1
  mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc" "$r/tmp" "$r/root" "$r/proc" "$r/sys" \
    "$r/dev" "$r/var/www" "$r/home"
  chmod 1777 "$r/tmp"
  cp "$busybox" "$r/bin/busybox"
  local app
  for app in $("$busybox" --list-full); do
    [ "$app" = bin/busybox ] && continue
    [ -e "$r/$app" ] || ln -s /bin/busybox "$r/$app"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$r/etc/group"
}

path_env='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'
if [ ! -s "$out/busybox.oci.tar" ]; then
  rootfs "$work/busybox"
  image "$out/busybox.oci.tar" "$work/busybox" "{$path_env,\"Cmd\":[\"sh\"]}" \
    docker.io/library/busybox:latest docker.io/library/busybox:1.35
fi
if [ ! -s "$out/pause.oci.tar" ]; then
  mkdir -p "$work/pause/bin" "$work/pause/proc" "$work/pause/dev" "$work/pause/sys"
  cp "$busybox" "$work/pause/bin/busybox"
  # The sandbox's only process: sleeps until the runtime kills it (SIGKILL when the sandbox stops).
  image "$out/pause.oci.tar" "$work/pause" "{$path_env,\"Entrypoint\":[\"/bin/busybox\",\"sleep\",\"inf\"]}" \
    registry.k8s.io/pause:3.10
fi
