#!/usr/bin/env bash
# The Action's first step (action.yml): download the mcpdrift release
# archive for this runner, check it against checksums.txt, check
# checksums.txt's cosign signature when cosign is on the runner (required
# with require-signature: true), unpack it under RUNNER_TEMP and put it on
# the PATH. Outputs: bin (the binary's path), version.
set -euo pipefail

fail() { echo "::error title=mcpdrift install::$1"; exit 1; }

version="${INPUT_VERSION:-}"
if [ -z "$version" ]; then
  case "${ACTION_REF:-}" in
    v[0-9]*.[0-9]*.[0-9]*) version="$ACTION_REF" ;;
    *) fail "no version: use the action at a release tag (mcpdrift/mcpdrift@v1.2.3) or set with: version" ;;
  esac
fi
version="${version#v}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]] || fail "version $version is not MAJOR.MINOR.PATCH"

case "${RUNNER_OS:-}" in
  Linux) os=linux ;;
  macOS) os=darwin ;;
  Windows) os=windows ;;
  *) fail "runner OS ${RUNNER_OS:-unknown}: mcpdrift is released for Linux, macOS and Windows" ;;
esac
case "${RUNNER_ARCH:-}" in
  X64) arch=amd64 ;;
  ARM64) arch=arm64 ;;
  *) fail "runner architecture ${RUNNER_ARCH:-unknown}: mcpdrift is released for X64 and ARM64" ;;
esac
ext=tar.gz
[ "$os" = windows ] && ext=zip
# The archive's name is .goreleaser.yaml's name_template.
archive="mcpdrift_${version}_${os}_${arch}.${ext}"
base="${INPUT_RELEASE_URL:-https://github.com/mcpdrift/mcpdrift/releases/download/v$version}"
base="${base%/}"

dir="${RUNNER_TEMP:?}/mcpdrift-$version-$os-$arch"
rm -rf "$dir"
mkdir -p "$dir/bin"
fetch() { curl -fsSL --retry 3 --proto '=https,file' -o "$dir/$1" "$base/$1" || fail "could not download $base/$1"; }
fetch "$archive"
fetch checksums.txt

# The archive's SHA-256 must be the one checksums.txt lists for its name.
want="$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$dir/checksums.txt")"
[ -n "$want" ] || fail "checksums.txt lists no $archive"
if command -v sha256sum > /dev/null; then
  got="$(sha256sum "$dir/$archive" | cut -d' ' -f1)"
else
  got="$(shasum -a 256 "$dir/$archive" | cut -d' ' -f1)"
fi
[ "$got" = "$want" ] || fail "$archive has SHA-256 $got; checksums.txt says $want"
echo "mcpdrift: $archive matches checksums.txt (sha256:$got)"

# checksums.txt is signed keylessly by the release workflow of the tag.
if command -v cosign > /dev/null; then
  fetch checksums.txt.sigstore.json
  cosign verify-blob "$dir/checksums.txt" \
    --bundle "$dir/checksums.txt.sigstore.json" \
    --certificate-identity "https://github.com/mcpdrift/mcpdrift/.github/workflows/release.yml@refs/tags/v$version" \
    --certificate-oidc-issuer https://token.actions.githubusercontent.com \
    || fail "the cosign signature of checksums.txt does not verify"
  echo "mcpdrift: checksums.txt is signed by the release workflow of v$version"
elif [ "${INPUT_REQUIRE_SIGNATURE:-false}" = true ]; then
  fail "require-signature is true but cosign is not on the runner (sigstore/cosign-installer installs it)"
else
  echo "::notice title=mcpdrift install::cosign is not on the runner: the checksum was verified, the signature was not (require-signature: true makes it required)"
fi

if [ "$ext" = zip ]; then
  unzip -q -o "$dir/$archive" mcpdrift.exe -d "$dir/bin"
  bin="$dir/bin/mcpdrift.exe"
else
  tar -xzf "$dir/$archive" -C "$dir/bin" mcpdrift
  bin="$dir/bin/mcpdrift"
fi
echo "$dir/bin" >> "$GITHUB_PATH"
"$bin" version
{
  echo "bin=$bin"
  echo "version=$version"
} >> "$GITHUB_OUTPUT"
