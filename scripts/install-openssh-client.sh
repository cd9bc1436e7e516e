#!/usr/bin/env bash
# install-openssh-client.sh — make sure ssh-keygen is installed (OpenSSH's
# client tools: the sshsig tests check mcpdrift's signatures against
# `ssh-keygen -Y sign` and `-Y verify`), and print its path on stdout.
#
# Usage:
#   scripts/install-openssh-client.sh          install if missing, print the path of ssh-keygen
#   scripts/install-openssh-client.sh --check  print the path if installed; exit 1 if not
#
# When ssh-keygen is not on PATH, Debian's openssh-client package is
# installed with apt-get (as root, or through a sudo that needs no
# password), without recommended packages; the package lists are updated
# only when the first attempt fails. Nothing else is installed or changed.
# Exit 3 when ssh-keygen is missing and cannot be installed (no apt-get,
# not root, apt-get failed). Messages go to stderr; stdout carries only the
# path. .ci/run calls this before the tests.
set -euo pipefail

die() { echo "install-openssh-client: $1" >&2; exit "${2:-1}"; }

mode=install
for arg in "$@"; do
  case "$arg" in
    --check) mode=check ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg (see --help)" 2 ;;
  esac
done

if path="$(command -v ssh-keygen)"; then
  echo "$path"
  exit 0
fi
[ "$mode" = check ] && die "ssh-keygen is not installed" 1

command -v apt-get > /dev/null || die "ssh-keygen is missing and there is no apt-get to install openssh-client with" 3
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
  as_root=(sudo -n)
else
  die "ssh-keygen is missing; installing openssh-client needs root (apt-get install openssh-client)" 3
fi

export DEBIAN_FRONTEND=noninteractive
apt() { ${as_root[@]+"${as_root[@]}"} apt-get "$@" >&2; }
echo "install-openssh-client: installing openssh-client with apt-get" >&2
if ! apt install -y --no-install-recommends openssh-client; then
  echo "install-openssh-client: updating the package lists and trying again" >&2
  apt update && apt install -y --no-install-recommends openssh-client || die "apt-get install openssh-client failed" 3
fi
hash -r
path="$(command -v ssh-keygen)" || die "openssh-client is installed but ssh-keygen is not on PATH" 3
echo "$path"
