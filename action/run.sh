#!/usr/bin/env bash
# What action.yml's "Run ci-eval" step runs, after action/entry.py --hand-over took the token
# out of the environment: the token is on the inherited pipe named by CI_EVAL_TOKEN_FD, and
# neither this shell nor ci-eval has it in its environment block, so no process that runs the
# user's code (ci-eval, its retriever processes, or this shell, their parent) can read it
# from /proc/PID/environ. ci-eval reads the pipe to its end before any user code runs.
# The exit code is kept for the Gate step, so the artefact is uploaded first.
#
# Environment:
#   CI_EVAL_INTERPRETER  the interpreter ci-eval was installed into (the install step's output)
#   CI_EVAL_SOURCE       the action's checkout (github.action_path)
#   CI_EVAL_TOKEN_FD     the pipe's descriptor (set by the hand-over; none without a token)
set -uo pipefail

status=0
# entry.py, not `python -m ci_eval`: -m puts the workspace first on the import path, where a
# repository folder named ci_eval would run instead of the tool.
"$CI_EVAL_INTERPRETER" "$CI_EVAL_SOURCE/action/entry.py" action || status=$?
if [[ "${CI_EVAL_TOKEN_FD:-}" =~ ^[0-9]+$ ]]; then
  eval "exec ${CI_EVAL_TOKEN_FD}<&-"
fi
echo "exit-code=$status" >> "$GITHUB_OUTPUT"
