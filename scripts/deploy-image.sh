#!/usr/bin/env bash
# deploy-image.sh — name the release's image by tag and digest in every
# Kubernetes manifest of deploy/kubernetes: each `image:` line becomes
# ghcr.io/mcpdrift/mcpdrift:TAG@DIGEST (the digest is what the kubelet
# pulls; the tag says which release it is). release.yml runs it with the
# digest crane printed when it pushed the image (the index digest
# scripts/build-image.sh computed), attaches the result to the release as
# mcpdrift-kubernetes.yaml and opens a pull request with it.
# deploy/deploy_test.go runs it on a copy and validates what it wrote.
#
# Usage: scripts/deploy-image.sh TAG DIGEST [OUTDIR]
#   TAG     the release's tag, vMAJOR.MINOR.PATCH[-PRERELEASE]
#   DIGEST  sha256:<64 hex digits>
#   OUTDIR  write the manifests there (default: rewrite deploy/kubernetes)
set -euo pipefail

die() { echo "deploy-image: $1" >&2; exit "${2:-1}"; }
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: scripts/deploy-image.sh TAG DIGEST [OUTDIR]" 2
tag="$1" digest="$2"
repo="ghcr.io/mcpdrift/mcpdrift"
[[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || die "tag $tag is not vMAJOR.MINOR.PATCH[-PRERELEASE]" 2
[[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] || die "digest $digest is not sha256:<64 hex digits>" 2

src="$(cd "$(dirname "$0")/../deploy/kubernetes" && pwd)"
out="${3:-$src}"
mkdir -p "$out"
n=0
for f in "$src"/*.yaml; do
  total="$(grep -c '^ *image: ' "$f" || true)"
  ours="$(grep -cE "^ *image: $repo:[^ ]+$" "$f" || true)"
  [ "$total" = "$ours" ] || die "$(basename "$f"): an image: line that is not $repo:…"
  tmp="$(mktemp)"
  sed -E "s#^( *image: )$repo:[^ ]+\$#\\1$repo:$tag@$digest#" "$f" > "$tmp"
  mv "$tmp" "$out/$(basename "$f")"
  chmod 0644 "$out/$(basename "$f")"
  n=$((n + ours))
done
[ "$n" -gt 0 ] || die "no image: line in $src"
echo "deploy-image: $n images are $repo:$tag@$digest in $out" >&2
