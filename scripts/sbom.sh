#!/usr/bin/env bash
# sbom.sh — the CycloneDX SBOM of the mcpdrift binary for one platform, by
# cyclonedx-gomod (pinned in tools/cyclonedx/go.mod): the modules that
# cmd/mcpdrift links for GOOS/GOARCH, with their licenses, read from the
# module cache (offline). No serial number and no timestamp: the same
# commit gives the same bytes. goreleaser runs it once per archive
# (.goreleaser.yaml, sboms), from dist/.
#
# Usage: scripts/sbom.sh GOOS GOARCH OUTPUT
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: scripts/sbom.sh GOOS GOARCH OUTPUT" >&2; exit 2; }
goos="$1" goarch="$2" out="$3"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
cd "$(dirname "$0")/.."

# goreleaser passes the Go variables it was run with, empty when unset;
# an empty one means the default to go, but some must not be empty.
for v in GOFLAGS GOMODCACHE GOCACHE GOPROXY GOTOOLCHAIN; do
  [ -n "${!v:-}" ] || unset "$v"
done

# The tool itself is built for this machine (go tool -n builds it and
# prints its path); only the analysis sees the target platform.
bin="$(go tool -modfile=tools/cyclonedx/go.mod -n cyclonedx-gomod)"
GOOS="$goos" GOARCH="$goarch" CGO_ENABLED=0 \
  "$bin" app -main cmd/mcpdrift -licenses -json -noserial -notimestamp -output "$out" .
