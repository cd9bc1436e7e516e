#!/usr/bin/env bash
# build-image.sh — mcpdrift's container image as an OCI image layout, from
# the release's linux binaries (goreleaser's dist/), without a daemon and
# without pulling anything (tools/image/mkimage, go-containerregistry):
# scratch, the static binary, Debian's CA certificates
# (scripts/fetch-ca-certificates.sh), the non-root user 65532, linux/amd64
# and linux/arm64 in one index. Every timestamp is the commit's, so a
# rebuild of the same commit gives the same digest. It prints the index's
# digest; release.yml pushes the layout with crane and pins that digest
# into the Kubernetes manifests (scripts/deploy-image.sh).
#
# Usage: scripts/build-image.sh DIST OUT [VERSION]
#   DIST     goreleaser's dist directory (its metadata.json and artifacts.json)
#   OUT      the layout's directory (created; must not exist)
#   VERSION  default: the version in DIST/metadata.json
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: scripts/build-image.sh DIST OUT [VERSION]" >&2; exit 2; }
dist="$(cd "$1" && pwd)" out="$2"
[ ! -e "$out" ] || { echo "build-image: $out exists" >&2; exit 2; }
mkdir -p "$out" && out="$(cd "$out" && pwd)" && rmdir "$out"
cd "$(dirname "$0")/.."

# The binaries goreleaser built for linux (dist/mcpdrift_linux_amd64_v1,
# dist/mcpdrift_linux_arm64_v8.0).
bins=()
for arch in amd64 arm64; do
  set -- "$dist"/mcpdrift_linux_"$arch"*/mcpdrift
  [ $# -eq 1 ] && [ -f "$1" ] || { echo "build-image: no single linux/$arch binary in $dist" >&2; exit 2; }
  bins+=(-bin "linux/$arch=$1")
done
version="${3:-$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' "$dist/metadata.json")}"
[ -n "$version" ] || { echo "build-image: no version in $dist/metadata.json" >&2; exit 2; }
ca="$(bash scripts/fetch-ca-certificates.sh)"
trap 'rm -rf "$ca"' EXIT
# The commit the binaries were built from, and its time: every timestamp.
commit="$(sed -n 's/.*"commit":"\([0-9a-f]*\)".*/\1/p' "$dist/metadata.json")"
epoch="$(git log -1 --format=%ct "$commit")" || { echo "build-image: commit $commit of $dist is not in this repository" >&2; exit 2; }
go -C tools/image run ./cmd/mkimage -out "$out" "${bins[@]}" -ca "$ca" \
  -created "$epoch" -version "$version" -revision "$commit" -digest-file "$out.digest"
