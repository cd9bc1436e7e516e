#!/usr/bin/env bash
# The Action's second step (action.yml): run mcpdrift lock check (or
# drift) once, writing the text report to the log, SARIF to the sarif
# input's path and Markdown beside it (--report), the Markdown to the job
# summary, and the verdict to the step's outputs. It exits 0 whatever the
# verdict: the comment step runs next, and the verdict step fails the job.
set -euo pipefail

fail() { echo "::error title=mcpdrift::$1"; exit 1; }
bin="${MCPDRIFT_BIN:?}"
sarif="${INPUT_SARIF:-mcpdrift.sarif}"
markdown="${RUNNER_TEMP:?}/mcpdrift-report.md"
args=()
while IFS= read -r line; do
  line="${line%$'\r'}"
  [ -n "$line" ] && args+=("$line")
done <<< "${INPUT_ARGS:-}"

case "${INPUT_COMMAND:-lock-check}" in
  lock-check) cmd=(lock check --lock "${INPUT_LOCK:-mcpdrift.lock}") ;;
  drift) cmd=(drift) ;;
  *) fail "command ${INPUT_COMMAND}: lock-check or drift" ;;
esac

# The report quotes what servers sent: no line of it may act as a
# workflow command (::stop-commands::, with a token nobody can guess).
stop="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
echo "::stop-commands::$stop"
set +e
"$bin" "${cmd[@]}" --format text --color never --report "sarif=$sarif" --report "markdown=$markdown" ${args[@]+"${args[@]}"}
code=$?
set -e
echo "::$stop::"

case "$code" in
  0) result=pass ;;
  1) result=fail ;;
  3) result=inconclusive ;;
  *) result=error ;;
esac
if [ "${INPUT_SUMMARY:-true}" = true ] && [ -f "$markdown" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$markdown" >> "$GITHUB_STEP_SUMMARY"
fi
{
  echo "exit-code=$code"
  echo "result=$result"
  if [ -f "$sarif" ]; then echo "sarif=$sarif"; fi
  if [ -f "$markdown" ]; then echo "markdown=$markdown"; fi
} >> "$GITHUB_OUTPUT"
echo "mcpdrift: $result (exit $code)"
