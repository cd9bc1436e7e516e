#!/usr/bin/env bash
# install-test-peers.sh — install the npm peers that the real-peer
# integration tests (internal/peers) run, at pinned versions, into a cache
# directory outside the repository, and print the path of the entry point
# on stdout.
#
# Usage:
#   scripts/install-test-peers.sh [PEER]            install if needed, print the entry point
#   scripts/install-test-peers.sh --check [PEER]    print the entry point if installed; exit 1 if not
#   scripts/install-test-peers.sh --dir [PEER]      print the install directory and exit
#
# Peers (PEER, default everything):
#   everything   @modelcontextprotocol/server-everything (a JavaScript file to
#                run with the machine's node, >= 18)
#   node         Node.js 22 from the npm registry (node-<os>-<arch>, a prebuilt
#                binary shipped as a registry package): prints the node binary.
#                The two peers below need node >= 22; this one runs them.
#   inspector    @modelcontextprotocol/inspector, the MCP Inspector (its
#                launcher: run with the node peer, "--cli" first)
#   conformance  @modelcontextprotocol/conformance, the official conformance
#                suite (run with the node peer)
#
# Environment:
#   MCPDRIFT_PEERS_DIR            cache directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpdrift-peers)
#   MCPDRIFT_EVERYTHING_VERSION   override the pinned @modelcontextprotocol/server-everything version
#   MCPDRIFT_EVERYTHING_SDK       override the pinned @modelcontextprotocol/sdk it runs on (its
#                                 package.json asks for ^1.30.0; pinning keeps the protocol
#                                 behaviour the tests expect from drifting with new SDK releases)
#   MCPDRIFT_NODE_VERSION         override the pinned Node.js (node-<os>-<arch>) version
#   MCPDRIFT_INSPECTOR_VERSION    override the pinned @modelcontextprotocol/inspector version
#   MCPDRIFT_CONFORMANCE_VERSION  override the pinned @modelcontextprotocol/conformance version
#   MCPDRIFT_CONFORMANCE_SDK      override the pinned @modelcontextprotocol/sdk the suite's own
#                                 client runs on (it asks for ^1.29.0)
#
# The install is idempotent: a complete install of the pinned version is
# reused without touching the network. A new install goes into a temporary
# directory that is renamed into place only when npm succeeded, so an
# interrupted or concurrent run never leaves a half-installed package where
# the tests look for it. Needs node and npm (exit 3 when missing); npm reaches
# only the npm registry, and runs no package's install scripts. Messages go
# to stderr; stdout carries only the path.
set -euo pipefail

cache="${MCPDRIFT_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpdrift-peers}"
die() { echo "install-test-peers: $1" >&2; exit "${2:-1}"; }

mode=install
peer=everything
for arg in "$@"; do
  case "$arg" in
    --check) mode=check ;;
    --dir) mode=dir ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    everything|node|inspector|conformance) peer="$arg" ;;
    *) die "unknown argument: $arg (see --help)" 2 ;;
  esac
done

version_ok() { [[ "$2" =~ ^[0-9A-Za-z.+-]+$ ]] || die "$1: not a version: $2" 2; }

case "$peer" in
  everything)
    pkg='@modelcontextprotocol/server-everything'
    version="${MCPDRIFT_EVERYTHING_VERSION:-2026.8.31}"
    sdk="${MCPDRIFT_EVERYTHING_SDK:-1.32.2}"
    version_ok MCPDRIFT_EVERYTHING_VERSION "$version"
    version_ok MCPDRIFT_EVERYTHING_SDK "$sdk"
    dest="$cache/server-everything-$version-sdk-$sdk"
    ;;
  node)
    version="${MCPDRIFT_NODE_VERSION:-22.23.5}"
    version_ok MCPDRIFT_NODE_VERSION "$version"
    case "$(uname -s)" in
      Linux) os=linux ;;
      Darwin) os=darwin ;;
      *) die "no node package for $(uname -s)" 3 ;;
    esac
    case "$(uname -m)" in
      x86_64|amd64) arch=x64 ;;
      aarch64|arm64) arch=arm64 ;;
      *) die "no node package for $(uname -m)" 3 ;;
    esac
    pkg="node-$os-$arch"
    sdk=''
    dest="$cache/$pkg-$version"
    ;;
  inspector)
    pkg='@modelcontextprotocol/inspector'
    version="${MCPDRIFT_INSPECTOR_VERSION:-2.12.0}"
    version_ok MCPDRIFT_INSPECTOR_VERSION "$version"
    sdk=''
    dest="$cache/inspector-$version"
    ;;
  conformance)
    pkg='@modelcontextprotocol/conformance'
    version="${MCPDRIFT_CONFORMANCE_VERSION:-0.2.0-alpha.12}"
    sdk="${MCPDRIFT_CONFORMANCE_SDK:-1.32.2}"
    version_ok MCPDRIFT_CONFORMANCE_VERSION "$version"
    version_ok MCPDRIFT_CONFORMANCE_SDK "$sdk"
    dest="$cache/conformance-$version-sdk-$sdk"
    ;;
esac
pkgdir="$dest/node_modules/$pkg"
[[ "$mode" == dir ]] && { echo "$dest"; exit 0; }

# The node peer is checked without node: its binary tells its version.
node_entry() {
  local f="$pkgdir/bin/node"
  [[ -x "$f" ]] && [[ "$("$f" --version 2>/dev/null)" == "v$version" ]] && echo "$f"
}

# entry prints the entry point of the installed package (its bin, else main),
# after checking that the installed versions are the pinned ones.
entry() {
  if [[ "$peer" == node ]]; then
    node_entry
    return
  fi
  [[ -f "$pkgdir/package.json" ]] || return 1
  node -e '
    const fs = require("fs"), path = require("path");
    const [dir, want, sdkDir, wantSDK] = process.argv.slice(1);
    const read = (d) => JSON.parse(fs.readFileSync(path.join(d, "package.json"), "utf8"));
    const p = read(dir);
    if (p.version !== want) process.exit(1);
    if (wantSDK) {
      // The SDK the package resolves: its own nested copy, else the top-level one.
      const nested = path.join(dir, "node_modules", "@modelcontextprotocol", "sdk");
      try { if (read(fs.existsSync(nested) ? nested : sdkDir).version !== wantSDK) process.exit(1); } catch { process.exit(1); }
    }
    let bin = p.bin;
    if (bin && typeof bin === "object") bin = bin["mcp-inspector"] || bin[path.basename(p.name)] || Object.values(bin)[0];
    const rel = bin || p.main || "index.js";
    const f = path.resolve(dir, rel);
    if (!fs.existsSync(f)) process.exit(1);
    console.log(f);
  ' "$pkgdir" "$version" "$dest/node_modules/@modelcontextprotocol/sdk" "$sdk"
}

if [[ "$peer" != node ]]; then
  command -v node >/dev/null 2>&1 || die "node is not installed" 3
fi
if e="$(entry)"; then
  echo "$e"
  exit 0
fi
[[ "$mode" == check ]] && die "$pkg@$version is not installed in $dest" 1

command -v npm >/dev/null 2>&1 || die "npm is not installed" 3
if [[ "$peer" == inspector || "$peer" == conformance ]]; then
  # These need node >= 22 to run (and npm then resolves them for it): put
  # the pinned node first in PATH for npm and for the entry check.
  n="$(bash "$0" node)" || die "the node peer (Node.js 22, which $pkg needs) could not be installed" 4
  PATH="$(dirname "$n"):$PATH"
  export PATH
fi
mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.install-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
specs=("$pkg@$version")
[[ -n "$sdk" ]] && specs+=("@modelcontextprotocol/sdk@$sdk")
echo "install-test-peers: installing ${specs[*]} into $dest" >&2
start=$SECONDS
# --ignore-scripts: nothing from the packages runs at install time.
npm install --prefix "$tmp" "${specs[@]}" --no-audit --no-fund --no-save \
  --ignore-scripts --omit=dev --loglevel=error >&2 \
  || die "npm install ${specs[*]} failed" 4
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
