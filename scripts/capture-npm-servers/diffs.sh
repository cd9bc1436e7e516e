#!/usr/bin/env bash
# Regenerates testdata/realworld/<short>/diff.golden.{json,txt} with the CLI:
# mcpdrift diff OLD NEW, OLD and NEW being the two <version>.tools-list.json
# of each directory, older version first (sort -V: numerically, a leading v
# as in Go module versions ignored alike on both sides).
# Paths are given relative to the repository root, as the test does, since
# the report records them. Run from anywhere; needs Go.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
bin="$(mktemp -d)/mcpdrift"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/mcpdrift
for dir in testdata/realworld/*/; do
  dir="${dir%/}"
  mapfile -t files < <(ls "$dir" | grep '\.tools-list\.json$' | sed 's/\.tools-list\.json$//' | sort -V)
  if [ "${#files[@]}" -ne 2 ]; then
    echo "diffs.sh: $dir: want exactly two <version>.tools-list.json, have ${#files[@]}" >&2
    exit 2
  fi
  old="$dir/${files[0]}.tools-list.json"
  new="$dir/${files[1]}.tools-list.json"
  for fmt in json text; do
    out="$dir/diff.golden.$fmt"
    [ "$fmt" = json ] || out="$dir/diff.golden.txt"
    rc=0
    "$bin" diff "$old" "$new" --format "$fmt" --color never -o "$out" || rc=$?
    if [ "$rc" -gt 1 ]; then
      echo "diffs.sh: mcpdrift diff $old $new exited $rc" >&2
      exit "$rc"
    fi
  done
  echo "$dir: ${files[0]} -> ${files[1]}"
done
