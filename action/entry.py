"""`ci-eval` as the action starts it (action.yml's Run step, then action/run.sh).

Run as a file, so the import path starts with this folder, not the workspace: ci_eval is
imported from where the action installed it even when the repository has a folder named
ci_eval. The workspace is then put first on the path, as `python -m` would have put it, for
the user's retriever modules to import as they do with `python -m ci_eval`.

``entry.py --hand-over COMMAND...``: what the Run step starts first. It replaces itself by
COMMAND (action/run.sh) with the token taken out of the environment and put on an inherited
pipe (ci_eval/github/token_handover.py), so the shell that waits for ci-eval never holds it
in its environment block.
"""

import os
import sys

del sys.path[0]  # this folder: nothing here is imported

if sys.argv[1:2] == ["--hand-over"]:
    from ci_eval.github.token_handover import exec_without_token

    try:
        exec_without_token(sys.argv[2:], os.environ, always=True)
    except Exception as exc:  # noqa: BLE001 - one line for the log, never a traceback
        print(f"ci-eval: error: the Run step could not start {sys.argv[2:3]}: {exc}", file=sys.stderr)
    sys.exit(3)

from ci_eval.cli import main  # noqa: E402 - the path is set first on purpose

sys.path.insert(0, os.getcwd())
main()
