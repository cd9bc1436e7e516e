#!/usr/bin/env bash
# The Action's last step (action.yml): the job's outcome from mcpdrift's
# exit code. pass (0) passes; fail (1, findings) fails; inconclusive (3)
# fails unless fail-on-inconclusive is false; error (2, bad input) fails.
set -euo pipefail

case "${RESULT:-}" in
  pass)
    echo "mcpdrift: pass" ;;
  fail)
    echo "::error title=mcpdrift::findings need review (exit 1): see the job summary; approve them with mcpdrift review or approve"
    exit 1 ;;
  inconclusive)
    if [ "${INPUT_FAIL_ON_INCONCLUSIVE:-true}" = false ]; then
      echo "::warning title=mcpdrift::inconclusive (exit 3): the evidence cannot support a verdict; passing because fail-on-inconclusive is false"
    else
      echo "::error title=mcpdrift::inconclusive (exit 3): the evidence cannot support a verdict (fail-on-inconclusive: false lets it pass)"
      exit 1
    fi ;;
  *)
    echo "::error title=mcpdrift::mcpdrift could not run (exit ${EXIT_CODE:-unknown}): see the log"
    exit 1 ;;
esac
