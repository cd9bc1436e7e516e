#!/usr/bin/env bash
# install-postgresql.sh — make sure PostgreSQL's server binaries (initdb,
# pg_ctl, postgres) are installed, and print the directory that holds them
# on stdout. The store tests (internal/pgtest) start a private cluster
# from there; --start starts one here instead, for a person.
#
# Usage:
#   scripts/install-postgresql.sh            install if missing, print the bin directory
#   scripts/install-postgresql.sh --check    print the bin directory if installed; exit 1 if not
#   scripts/install-postgresql.sh --start    install if missing, then start a private cluster
#                                            and print its URL (stop: pg_ctl -D DIR/data stop)
#
# When the binaries are missing, Debian's postgresql package is installed
# with apt-get (as root, or through a sudo that needs no password), without
# recommended packages; the package lists are updated only when the first
# attempt fails. Its packaged cluster is not needed: the tests never touch
# it. --start runs initdb in a new temporary directory, as the user
# postgres when run as root (initdb refuses root), and pg_ctl start on
# 127.0.0.1 at a free port with the unix socket in that directory, trust
# authentication for the user mcpdrift on loopback only. Exit 3 when the
# binaries are missing and cannot be installed. Messages go to stderr;
# stdout carries only the directory (or the URL). .ci/run calls this
# before the tests.
set -euo pipefail

die() { echo "install-postgresql: $1" >&2; exit "${2:-1}"; }

mode=install
for arg in "$@"; do
  case "$arg" in
    --check) mode=check ;;
    --start) mode=start ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $arg (see --help)" 2 ;;
  esac
done

find_bin() {
  local d
  # the newest /usr/lib/postgresql/N/bin, else initdb on PATH
  d="$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -t/ -k5 -n | tail -n 1 || true)"
  if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  if command -v initdb > /dev/null && command -v pg_ctl > /dev/null; then
    dirname "$(readlink -f "$(command -v initdb)")"; return 0
  fi
  return 1
}

if ! bin="$(find_bin)"; then
  [ "$mode" = check ] && die "PostgreSQL's server binaries are not installed" 1
  command -v apt-get > /dev/null || die "PostgreSQL is missing and there is no apt-get to install it with" 3
  if [ "$(id -u)" = 0 ]; then
    as_root=()
  elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
    as_root=(sudo -n)
  else
    die "PostgreSQL is missing; installing it needs root (apt-get install postgresql)" 3
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt() { ${as_root[@]+"${as_root[@]}"} apt-get "$@" >&2; }
  echo "install-postgresql: installing postgresql with apt-get" >&2
  if ! apt install -y --no-install-recommends postgresql; then
    echo "install-postgresql: updating the package lists and trying again" >&2
    apt update && apt install -y --no-install-recommends postgresql || die "apt-get install postgresql failed" 3
  fi
  bin="$(find_bin)" || die "postgresql is installed but initdb and pg_ctl were not found" 3
fi

if [ "$mode" != start ]; then
  echo "$bin"
  exit 0
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/mcpdrift-pg-XXXXXX")"
chmod 700 "$dir"
as_pg=()
if [ "$(id -u)" = 0 ]; then
  id postgres > /dev/null 2>&1 || die "running as root and there is no postgres user to run PostgreSQL as" 3
  chown postgres: "$dir"
  as_pg=(runuser -u postgres --)
fi
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2> /dev/null || echo $((20000 + RANDOM % 20000)))"
${as_pg[@]+"${as_pg[@]}"} "$bin/initdb" -D "$dir/data" -U mcpdrift --auth=trust -E UTF8 --no-locale > "$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; die "initdb failed" 1; }
${as_pg[@]+"${as_pg[@]}"} "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start > /dev/null ||
  { tail -n 20 "$dir/log" >&2; die "pg_ctl start failed" 1; }
echo "install-postgresql: started in $dir (stop: ${as_pg[*]:+${as_pg[*]} }$bin/pg_ctl -D $dir/data stop)" >&2
echo "postgres://mcpdrift@127.0.0.1:$port/postgres?sslmode=disable"
