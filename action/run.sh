#!/usr/bin/env bash
# What action.yml's "Run ci-eval" step runs, after that step took the token out of the
# environment: the token is on descriptor 3 (CI_EVAL_TOKEN_FD), and neither this shell nor
# ci-eval has it in its environment block, so no process that runs the user's code (ci-eval,
# its retriever processes, or this shell, their parent) can read it from /proc/PID/environ.
# The exit code is kept for the Gate step, so the artefact is uploaded first.
#
# Environment:
#   CI_EVAL_INTERPRETER  the interpreter ci-eval was installed into (the install step's output)
#   CI_EVAL_SOURCE       the action's checkout (github.action_path)
set -uo pipefail

status=0
# entry.py, not `python -m ci_eval`: -m puts the workspace first on the import path, where a
# repository folder named ci_eval would run instead of the tool.
CI_EVAL_TOKEN_FD=3 "$CI_EVAL_INTERPRETER" "$CI_EVAL_SOURCE/action/entry.py" action || status=$?
exec 3<&-
echo "exit-code=$status" >> "$GITHUB_OUTPUT"
