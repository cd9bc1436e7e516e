#!/usr/bin/env bash
# install-bash-completion.sh — make sure Debian's bash-completion is
# installed and print the path of its bash_completion script, which
# cobra's bash completion (mcpdrift completion bash) relies on, as every
# user's interactive bash does. internal/cli's TestCompletionBash sources
# it (MCPDRIFT_BASH_COMPLETION); .ci/run calls this script and requires
# the test under CI=true (MCPDRIFT_REQUIRE_BASH_COMPLETION=1).
#
# Usage: scripts/install-bash-completion.sh
#
# Exit 3 when it is missing and cannot be installed (not root, no apt-get).
# Messages go to stderr; stdout carries only the path.
set -euo pipefail

die() { echo "install-bash-completion: $1" >&2; exit "${2:-1}"; }
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac

script=/usr/share/bash-completion/bash_completion
if [ -f "$script" ]; then
  echo "$script"
  exit 0
fi
command -v apt-get > /dev/null || die "bash-completion is missing and there is no apt-get to install it with" 3
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
  as_root=(sudo -n)
else
  die "bash-completion is missing; installing it needs root (apt-get install bash-completion)" 3
fi
export DEBIAN_FRONTEND=noninteractive
apt() { ${as_root[@]+"${as_root[@]}"} apt-get "$@" >&2; }
echo "install-bash-completion: installing bash-completion with apt-get" >&2
if ! apt install -y --no-install-recommends bash-completion; then
  echo "install-bash-completion: updating the package lists and trying again" >&2
  apt update && apt install -y --no-install-recommends bash-completion || die "apt-get install bash-completion failed" 3
fi
[ -f "$script" ] || die "bash-completion is installed but $script is missing" 3
echo "$script"
