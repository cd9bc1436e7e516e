#!/usr/bin/env bash
# The Action's third step (action.yml): with a token, on a pull request,
# put the Markdown report in one comment of the pull request (updated on
# the next run, found by its marker). The token goes to curl on its
# standard input, never in an argument, a file or the log.
set -euo pipefail

marker='<!-- mcpdrift-action -->'
if [ -z "${GH_TOKEN:-}" ]; then
  echo "mcpdrift: no token: no pull request comment"
  exit 0
fi
pr=""
if [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ]; then
  pr="$(jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH")"
fi
if [ -z "$pr" ]; then
  echo "mcpdrift: not a pull request event: no comment"
  exit 0
fi
if [ -z "${REPORT:-}" ] || [ ! -f "$REPORT" ]; then
  echo "::warning title=mcpdrift::no report to comment with (result: ${RESULT:-unknown})"
  exit 0
fi
api="${GITHUB_API_URL:-https://api.github.com}/repos/${GITHUB_REPOSITORY:?}"

# api METHOD URL [BODYFILE]: the response on stdout; the token on curl's
# standard input as a header (curl -H @-).
call() {
  local data=()
  [ $# -ge 3 ] && data=(--data-binary "@$3")
  printf 'Authorization: Bearer %s\n' "$GH_TOKEN" | curl -fsS --retry 2 -X "$1" -H @- \
    -H 'Accept: application/vnd.github+json' -H 'X-GitHub-Api-Version: 2022-11-28' \
    ${data[@]+"${data[@]}"} "$2"
}

body="$(mktemp)"
trap 'rm -f "$body"' EXIT
# A comment holds at most 65536 characters.
{
  printf '%s\n' "$marker"
  head -c 60000 "$REPORT"
  [ "$(wc -c < "$REPORT")" -gt 60000 ] && printf '\n\n… (cut: the whole report is in the job summary)\n'
  true
} | jq -Rs '{body: .}' > "$body"

existing="$(call GET "$api/issues/$pr/comments?per_page=100" | jq -r --arg m "$marker" '[.[] | select(.body | startswith($m)) | .id] | first // empty')" || existing=""
if [ -n "$existing" ]; then
  call PATCH "$api/issues/comments/$existing" "$body" > /dev/null || { echo "::warning title=mcpdrift::could not update the pull request comment"; exit 0; }
  echo "mcpdrift: updated the pull request comment"
else
  call POST "$api/issues/$pr/comments" "$body" > /dev/null || { echo "::warning title=mcpdrift::could not comment on the pull request (does the token have pull-requests: write?)"; exit 0; }
  echo "mcpdrift: commented on the pull request"
fi
