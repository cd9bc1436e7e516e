#!/usr/bin/env bash
# release-snapshot.sh — goreleaser check, then a snapshot of the release,
# offline (the module proxy at most): the archives, checksums.txt, a
# CycloneDX SBOM per archive, the Homebrew cask and, with --all, the
# winget manifests, in dist/. Nothing is published or signed (a snapshot
# skips publishing; release.yml signs). It prints dist's path.
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
  skip=(--skip=winget)
fi
gr release --snapshot --clean --config "$cfg" ${skip[@]+"${skip[@]}"} >&2
echo "$src/dist"
