#!/usr/bin/env bash
# What action.yml's Gate step runs: the job's verdict, from the Run step's exit code and, on
# exit 0, from the outputs the run wrote when it decided (a defence that does not depend on
# the exit code: user code that ended the process with 0 leaves no "pass" behind).
#
# Environment:
#   CI_EVAL_EXIT          the Run step's exit-code output
#   CI_EVAL_VERDICT       its verdict output: pass | fail | error, empty when nothing was decided
#   CI_EVAL_PART          its part-name output (a shard's job writes a part, not a verdict)
#   CI_EVAL_MODE, CI_EVAL_SHARD, CI_EVAL_FAIL_ON_GATE   the action's inputs
set -uo pipefail

fail() {
  echo "::error title=ci-eval::$1"
  exit "$2"
}

code="${CI_EVAL_EXIT:-}"
case "$code" in
  0) ;;
  1) fail "the retrieval gate failed (see the comment or the job summary)" 1 ;;
  '') fail "ci-eval wrote no exit code (the Run step did not finish)" 3 ;;
  *) fail "ci-eval exited with code $code" "$code" ;;
esac

verdict="${CI_EVAL_VERDICT:-}"
fail_on_gate=$(printf '%s' "${CI_EVAL_FAIL_ON_GATE:-true}" | tr '[:upper:]' '[:lower:]')
if [ -n "${CI_EVAL_SHARD:-}" ]; then
  # A matrix job: its outcome is the part it wrote, judged by the merge job.
  [ -n "${CI_EVAL_PART:-}" ] || fail "ci-eval exited 0 but wrote no shard part" 3
  exit 0
fi
case "$verdict" in
  pass) exit 0 ;;
  fail) [ "$fail_on_gate" = false ] && exit 0
        fail "ci-eval exited 0 with the verdict fail" 1 ;;
  error) fail "ci-eval exited 0 with the verdict error (the retriever failed)" 4 ;;
  '') # The poster (mode: comment) decides nothing when there is no pull-request run to post.
      [ "${CI_EVAL_MODE:-run}" = comment ] && exit 0
      fail "ci-eval exited 0 without a verdict: the run ended before it decided (did the retriever's code end the process?)" 4 ;;
  *) fail "ci-eval exited 0 with an unknown verdict" 3 ;;
esac
