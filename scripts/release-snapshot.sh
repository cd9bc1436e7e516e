#!/usr/bin/env bash
# release-snapshot.sh — goreleaser check, then a snapshot of the release,
# offline (the module proxy at most): the archives, checksums.txt, a
# CycloneDX SBOM per archive, the Homebrew cask and, with --all, the
# winget manifests, in dist/. Nothing is published (a snapshot skips it)
# or signed: keyless signing needs the release workflow's identity, so a
# stand-in cosign on the PATH takes goreleaser's call, which is checked
# (the arguments release.yml's real cosign gets, and the bundle's name),
# and writes a placeholder bundle. It prints dist's path.
#
# Usage: scripts/release-snapshot.sh [--all]
#   default  linux/amd64 and linux/arm64 only (what .ci/run builds: the
#            image needs both; every platform costs a cold build of every
#            dependency, about 3.5 min each on 2 cores); winget is skipped
#            (it needs the Windows archives)
#   --all    every platform of the release, winget included
#
# goreleaser runs through go tool at the version tools/goreleaser/go.mod
# pins (its first build takes 7 to 10 minutes on 2 cores). In a linked
# git worktree the snapshot is made from a clone of HEAD (cyclonedx-gomod
# reads the version from git with go-git, which does not follow a
# worktree's .git file): commit first.
set -euo pipefail

die() { echo "release-snapshot: $1" >&2; exit "${2:-1}"; }
all=false
case "${1:-}" in
  --all) all=true ;;
  "") ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument $1 (see --help)" 2 ;;
esac
cd "$(dirname "$0")/.."
root="$PWD"
gr() { go tool -modfile="$root/tools/goreleaser/go.mod" goreleaser "$@"; }

gr check

src="$root"
if [ "$(git rev-parse --git-dir)" != "$(git rev-parse --git-common-dir)" ]; then
  src="$(mktemp -d)"
  echo "release-snapshot: a linked worktree: making the snapshot of HEAD in a clone, $src" >&2
  git clone -q "$root" "$src"
fi
cd "$src"

cfg=.goreleaser.yaml
skip=()
if ! $all; then
  cfg="$(mktemp -d)/goreleaser-linux.yaml"
  sed 's/^    goos: \[linux, darwin, windows\]$/    goos: [linux]/' .goreleaser.yaml > "$cfg"
  cmp -s "$cfg" .goreleaser.yaml && die ".goreleaser.yaml's goos line changed: update this script"
  skip+=(--skip=winget)
fi
stub="$(mktemp -d)"
cat > "$stub/cosign" <<EOS
#!/usr/bin/env bash
# A stand-in for cosign in a snapshot: records its arguments, writes a
# placeholder where the bundle goes. Not a signature.
printf '%s\n' "\$*" >> "$stub/calls"
for a in "\$@"; do case "\$a" in --bundle=*) echo '{"placeholder":"not a signature: a snapshot"}' > "\${a#--bundle=}" ;; esac; done
EOS
chmod +x "$stub/cosign"
# The snapshot's version is v0.0.0's next patch, whatever tags the
# repository has (goreleaser would take the newest, and a tag that is not
# semver, such as pre-house, fails the version template).
GORELEASER_CURRENT_TAG=v0.0.0 PATH="$stub:$PATH" gr release --snapshot --clean --config "$cfg" ${skip[@]+"${skip[@]}"} >&2
want="sign-blob --yes --bundle=dist/checksums.txt.sigstore.json dist/checksums.txt"
[ "$(cat "$stub/calls" 2> /dev/null)" = "$want" ] || die "goreleaser called cosign with: $(cat "$stub/calls" 2> /dev/null); want: $want"
grep -q '"name":"checksums.txt.sigstore.json"' "$src/dist/artifacts.json" || die "the signature bundle is not a release artifact"
echo "release-snapshot: goreleaser signs checksums.txt as release.yml's cosign will ($want)" >&2
echo "$src/dist"
