#!/usr/bin/env bash
# install-test-peers.sh — install the npm MCP servers that the real-peer
# integration tests (internal/peers) run against, at pinned versions, into a
# cache directory outside the repository, and print the path of the entry
# point (a JavaScript file to run with node) on stdout.
#
# Usage:
#   scripts/install-test-peers.sh            install if needed, print the entry point
#   scripts/install-test-peers.sh --check    print the entry point if installed; exit 1 if not
#   scripts/install-test-peers.sh --dir      print the install directory and exit
#
# Environment:
#   MCPDRIFT_PEERS_DIR          cache directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpdrift-peers)
#   MCPDRIFT_EVERYTHING_VERSION override the pinned @modelcontextprotocol/server-everything version
#   MCPDRIFT_EVERYTHING_SDK     override the pinned @modelcontextprotocol/sdk it runs on (its
#                               package.json asks for ^1.30.0; pinning keeps the protocol
#                               behaviour the tests expect from drifting with new SDK releases)
#
# The install is idempotent: a complete install of the pinned version is
# reused without touching the network. A new install goes into a temporary
# directory that is renamed into place only when npm succeeded, so an
# interrupted or concurrent run never leaves a half-installed package where
# the tests look for it. Needs node and npm (exit 3 when missing); npm reaches
# only the npm registry. Messages go to stderr; stdout carries only the path.
set -euo pipefail

pkg='@modelcontextprotocol/server-everything'
version="${MCPDRIFT_EVERYTHING_VERSION:-2026.8.31}"
sdk="${MCPDRIFT_EVERYTHING_SDK:-1.32.2}"
cache="${MCPDRIFT_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpdrift-peers}"
dest="$cache/server-everything-$version-sdk-$sdk"
pkgdir="$dest/node_modules/$pkg"

die() { echo "install-test-peers: $1" >&2; exit "${2:-1}"; }

mode=install
case "${1:-}" in
  '') ;;
  --check) mode=check ;;
  --dir) echo "$dest"; exit 0 ;;
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument: $1 (see --help)" 2 ;;
esac

[[ "$version" =~ ^[0-9A-Za-z.+-]+$ ]] || die "MCPDRIFT_EVERYTHING_VERSION: not a version: $version" 2
[[ "$sdk" =~ ^[0-9A-Za-z.+-]+$ ]] || die "MCPDRIFT_EVERYTHING_SDK: not a version: $sdk" 2
command -v node >/dev/null 2>&1 || die "node is not installed" 3

# entry prints the entry point of the installed package (its bin, else main),
# after checking that the installed versions are the pinned ones.
entry() {
  [[ -f "$pkgdir/package.json" ]] || return 1
  node -e '
    const fs = require("fs"), path = require("path");
    const [dir, want, sdkDir, wantSDK] = process.argv.slice(1);
    const read = (d) => JSON.parse(fs.readFileSync(path.join(d, "package.json"), "utf8"));
    const p = read(dir);
    if (p.version !== want) process.exit(1);
    // The SDK the package resolves: its own nested copy, else the top-level one.
    const nested = path.join(dir, "node_modules", "@modelcontextprotocol", "sdk");
    try { if (read(fs.existsSync(nested) ? nested : sdkDir).version !== wantSDK) process.exit(1); } catch { process.exit(1); }
    let rel = typeof p.bin === "string" ? p.bin : p.bin && Object.values(p.bin)[0];
    rel = rel || p.main || "index.js";
    const f = path.resolve(dir, rel);
    if (!fs.existsSync(f)) process.exit(1);
    console.log(f);
  ' "$pkgdir" "$version" "$dest/node_modules/@modelcontextprotocol/sdk" "$sdk"
}

if e="$(entry)"; then
  echo "$e"
  exit 0
fi
[[ "$mode" == check ]] && die "$pkg@$version is not installed in $dest" 1

command -v npm >/dev/null 2>&1 || die "npm is not installed" 3
mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.install-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "install-test-peers: installing $pkg@$version (on @modelcontextprotocol/sdk@$sdk) into $dest" >&2
start=$SECONDS
# --ignore-scripts: nothing from the package runs at install time.
npm install --prefix "$tmp" "$pkg@$version" "@modelcontextprotocol/sdk@$sdk" --no-audit --no-fund --no-save \
  --ignore-scripts --omit=dev --loglevel=error >&2 \
  || die "npm install $pkg@$version @modelcontextprotocol/sdk@$sdk failed" 4
[[ -f "$tmp/node_modules/$pkg/package.json" ]] || die "npm install left no $pkg" 4
if [[ -e "$dest" ]]; then
  # A stale or broken install (wrong version, missing entry point), or one a
  # concurrent run just finished: keep a working one, replace anything else.
  if e="$(entry)"; then
    echo "$e"
    exit 0
  fi
  rm -rf "$dest"
fi
# -T: never move into a directory a concurrent run created meanwhile.
mv -T "$tmp" "$dest" 2>/dev/null || [[ -d "$dest" ]] || die "cannot move the install into $dest" 4
trap - EXIT
rm -rf "$tmp"
echo "install-test-peers: installed in $((SECONDS - start)) s" >&2
entry || die "installed, but no entry point found in $pkgdir" 4
