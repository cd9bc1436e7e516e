#!/usr/bin/env bash
# fetch-ca-certificates.sh — the CA certificates of the container image,
# from Debian's ca-certificates package at a pinned version, checked
# against its pinned SHA-256, and print the directory holding them:
#
#   ca-certificates.crt   the Mozilla roots the package ships, one PEM
#                         bundle (what update-ca-certificates writes to
#                         /etc/ssl/certs/ca-certificates.crt), in C order
#   copyright             the package's copyright file
#   source                the package, version and SHA-256 they came from
#
# The package is fetched with apt-get download when this machine's apt
# knows that version (Debian 12), else from Debian's package archive.
# Either way the .deb must have the pinned SHA-256, so the image's bytes
# do not depend on where it ran. tools/image builds the image from them
# (scripts/build-image.sh); its test calls this script.
#
# Usage: scripts/fetch-ca-certificates.sh [OUTDIR]   (default: a new temporary directory)
set -euo pipefail

die() { echo "fetch-ca-certificates: $1" >&2; exit "${2:-1}"; }
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac

# Debian 12's ca-certificates. To move it: the version and the SHA256 of
# `apt-cache show ca-certificates=VERSION`, and the pool path.
version=20230311+deb12u1
sha256=0d5f444f594e48c1e16a41d8fc628a09b24c658916a1274025c2330f2a802bed
pool=http://deb.debian.org/debian/pool/main/c/ca-certificates
deb="ca-certificates_${version}_all.deb"

out="${1:-$(mktemp -d)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

got=""
if command -v apt-get > /dev/null && (cd "$work" && apt-get download -q "ca-certificates=$version" > /dev/null 2>&1); then
  got=apt-get
elif command -v curl > /dev/null && curl -fsSL --retry 3 -o "$work/$deb" "$pool/$deb"; then
  got="$pool/$deb"
else
  die "could not fetch $deb with apt-get download or from $pool" 3
fi
actual="$(sha256sum "$work/$deb" | cut -d' ' -f1)"
[ "$actual" = "$sha256" ] || die "$deb from $got has SHA-256 $actual, not the pinned $sha256"

mkdir "$work/x"
if command -v dpkg-deb > /dev/null; then
  dpkg-deb -x "$work/$deb" "$work/x"
else
  (cd "$work" && ar x "$deb" && tar -C x -xf data.tar.*)
fi
certs=("$work"/x/usr/share/ca-certificates/mozilla/*.crt)
[ "${#certs[@]}" -gt 100 ] || die "$deb holds ${#certs[@]} certificates, expected over 100"
: > "$out/ca-certificates.crt"
while IFS= read -r f; do
  cat "$f" >> "$out/ca-certificates.crt"
  # update-ca-certificates ends each certificate with a newline.
  [ -z "$(tail -c 1 "$f")" ] || echo >> "$out/ca-certificates.crt"
done < <(printf '%s\n' "${certs[@]}" | LC_ALL=C sort)
cp "$work/x/usr/share/doc/ca-certificates/copyright" "$out/copyright"
printf 'debian ca-certificates %s sha256:%s (%d certificates)\n' "$version" "$sha256" "${#certs[@]}" > "$out/source"
echo "fetch-ca-certificates: $(cat "$out/source") via $got" >&2
echo "$out"
