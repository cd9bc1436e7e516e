#!/usr/bin/env bash
# install-debian-tool.sh — make sure a command is installed, from Debian's
# package of that name if it is missing, and print its path on stdout.
#
# Usage:
#   scripts/install-debian-tool.sh COMMAND PACKAGE          install if missing, print the path
#   scripts/install-debian-tool.sh --check COMMAND PACKAGE  print the path if installed; exit 1 if not
#
# PACKAGE is installed with apt-get (as root, or through a sudo that needs
# no password), without recommended packages; the package lists are
# updated only when the first attempt fails. Nothing else is installed or
# changed. Exit 3 when COMMAND is missing and cannot be installed. Messages
# go to stderr; stdout carries only the path. .ci/run calls it for the
# tools the tests drive (tmux for the terminal session of mcpdrift review).
set -euo pipefail

die() { echo "install-debian-tool: $1" >&2; exit "${2:-1}"; }

mode=install
if [ "${1:-}" = --check ]; then mode=check; shift; fi
case "${1:-}" in -h|--help|"") sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -eq 2 ] || die "give COMMAND and PACKAGE (see --help)" 2
cmd="$1" pkg="$2"

if path="$(command -v "$cmd")"; then
  echo "$path"
  exit 0
fi
[ "$mode" = check ] && die "$cmd is not installed" 1

command -v apt-get > /dev/null || die "$cmd is missing and there is no apt-get to install $pkg with" 3
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
  as_root=(sudo -n)
else
  die "$cmd is missing; installing $pkg needs root (apt-get install $pkg)" 3
fi

export DEBIAN_FRONTEND=noninteractive
apt() { ${as_root[@]+"${as_root[@]}"} apt-get "$@" >&2; }
echo "install-debian-tool: installing $pkg with apt-get" >&2
if ! apt install -y --no-install-recommends "$pkg"; then
  echo "install-debian-tool: updating the package lists and trying again" >&2
  apt update && apt install -y --no-install-recommends "$pkg" || die "apt-get install $pkg failed" 3
fi
hash -r
path="$(command -v "$cmd")" || die "$pkg is installed but $cmd is not on PATH" 3
echo "$path"
