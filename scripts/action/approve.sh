#!/usr/bin/env bash
# The approve action's step (approve/action.yml): on a new branch, mcpdrift
# approve the named tools (or all) of a server into the lock, commit the
# lock, push the branch and open a pull request. The token goes to curl on
# its standard input only; the push uses the checkout's credentials.
set -euo pipefail

fail() { echo "::error title=mcpdrift approve::$1"; exit 1; }
bin="${MCPDRIFT_BIN:?}"
server="${INPUT_SERVER:?the server input is required}"
lock="${INPUT_LOCK:-mcpdrift.lock}"
[ -n "${GH_TOKEN:-}" ] || fail "the token input is required (it opens the pull request)"
[[ "$server" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || fail "server $server: a lock's server name"

flags=(--lock "$lock" --by "${INPUT_BY:?}")
[ -n "${INPUT_NOTE:-}" ] && flags+=(--note "$INPUT_NOTE")
[ "${INPUT_REVIEWED_DENIED_CHANGE:-false}" = true ] && flags+=(--i-reviewed-the-denied-change)
tools=()
while IFS= read -r line; do
  line="${line%$'\r'}"
  [ -n "$line" ] && tools+=("$line")
done <<< "${INPUT_TOOLS:-}"
if [ "${#tools[@]}" -eq 1 ] && [ "${tools[0]}" = all ]; then
  flags+=(--all)
  tools=()
elif [ "${#tools[@]}" -eq 0 ]; then
  fail "no tools: name them one per line, or all"
fi

branch="mcpdrift/approve-$server-${RUN_ID:-$(date +%s)}"
git checkout -q -b "$branch"
if [ "${#tools[@]}" -gt 0 ]; then
  "$bin" approve "$server" "${flags[@]}" -- "${tools[@]}"
else
  "$bin" approve "$server" "${flags[@]}"
fi
if git diff --quiet -- "$lock"; then
  echo "mcpdrift: nothing to approve: $lock is unchanged"
  exit 0
fi
git -c user.name="mcpdrift approve" -c user.email="mcpdrift-approve@users.noreply.github.com" \
  commit -q -m "mcpdrift: approve $server (${tools[*]:-all})" -m "Approved by ${INPUT_BY} with mcpdrift approve." -- "$lock"
git push -q origin "$branch"

body="$(mktemp)"
trap 'rm -f "$body"' EXIT
jq -n --arg head "$branch" --arg base "${INPUT_BASE:-main}" --arg server "$server" --arg by "$INPUT_BY" --arg tools "${tools[*]:-all}" \
  '{title: ("mcpdrift: approve " + $server), head: $head, base: $base,
    body: ("`mcpdrift approve " + $server + "` (" + $tools + "), by " + $by + ". The gate on this pull request shows the lock as approved.")}' > "$body"
api="${GITHUB_API_URL:-https://api.github.com}/repos/${GITHUB_REPOSITORY:?}"
url="$(printf 'Authorization: Bearer %s\n' "$GH_TOKEN" | curl -fsS --retry 2 -X POST -H @- \
  -H 'Accept: application/vnd.github+json' -H 'X-GitHub-Api-Version: 2022-11-28' \
  --data-binary "@$body" "$api/pulls" | jq -r '.html_url // empty')" || fail "could not open the pull request (does the token have pull-requests: write?)"
echo "mcpdrift: opened $url"
{
  echo "branch=$branch"
  echo "pull-request=$url"
} >> "$GITHUB_OUTPUT"
