#!/usr/bin/env bash
# install-chromium.sh — make sure a headless-capable Chromium is installed
# (the HTML report's browser tests, report/chromium_test.go, render the
# report in it and check that no script runs and nothing is loaded), and
# print the browser's path on stdout.
#
# Usage:
#   scripts/install-chromium.sh          install if missing, print the path of the browser
#   scripts/install-chromium.sh --check  print the path if installed; exit 1 if not
#
# The browser is MCPDRIFT_CHROMIUM when that is set (an executable file),
# else chromium (or chromium-browser) on PATH. When there is none, Debian's
# chromium package is installed with apt-get (as root, or through a sudo
# that needs no password), without recommended packages, with
# fonts-dejavu-core so the report renders with the same font everywhere;
# the package lists are updated only when the first attempt fails. Nothing
# else is installed or changed, and only Debian's archive is reached.
# Exit 3 when no browser is installed and none can be (no apt-get, not
# root, apt-get failed). Messages go to stderr; stdout carries only the
# path. .ci/run calls this before the tests.
set -euo pipefail

die() { echo "install-chromium: $1" >&2; exit "${2:-1}"; }

mode=install
for arg in "$@"; do
  case "$arg" in
    --check) mode=check ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg (see --help)" 2 ;;
  esac
done

if [ -n "${MCPDRIFT_CHROMIUM:-}" ]; then
  [ -f "$MCPDRIFT_CHROMIUM" ] && [ -x "$MCPDRIFT_CHROMIUM" ] || die "MCPDRIFT_CHROMIUM=$MCPDRIFT_CHROMIUM is not an executable file" 2
  echo "$MCPDRIFT_CHROMIUM"
  exit 0
fi
find_browser() { command -v chromium 2> /dev/null || command -v chromium-browser 2> /dev/null; }

if path="$(find_browser)"; then
  echo "$path"
  exit 0
fi
[ "$mode" = check ] && die "chromium is not installed (scripts/install-chromium.sh installs Debian's package)" 1

command -v apt-get > /dev/null || die "chromium is missing and there is no apt-get to install Debian's chromium package with" 3
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
  as_root=(sudo -n)
else
  die "chromium is missing; installing Debian's package needs root (apt-get install chromium)" 3
fi

export DEBIAN_FRONTEND=noninteractive
apt() { ${as_root[@]+"${as_root[@]}"} apt-get "$@" >&2; }
pkgs=(chromium fonts-dejavu-core)
echo "install-chromium: installing ${pkgs[*]} with apt-get" >&2
start=$SECONDS
if ! apt install -y -q --no-install-recommends "${pkgs[@]}"; then
  echo "install-chromium: updating the package lists and trying again" >&2
  apt update -q && apt install -y -q --no-install-recommends "${pkgs[@]}" || die "apt-get install ${pkgs[*]} failed" 3
fi
echo "install-chromium: installed in $((SECONDS - start)) s" >&2
hash -r
path="$(find_browser)" || die "chromium is installed but no chromium binary is on PATH" 3
echo "$path"
