"""`ci-eval` as the action starts it (action/run.sh).

Run as a file, so the import path starts with this folder, not the workspace: ci_eval is
imported from where the action installed it even when the repository has a folder named
ci_eval. The workspace is then put first on the path, as `python -m` would have put it, for
the user's retriever modules to import as they do with `python -m ci_eval`.
"""

import os
import sys

del sys.path[0]  # this folder: nothing here is imported
from ci_eval.cli import main  # noqa: E402 - the path is set first on purpose

sys.path.insert(0, os.getcwd())
main()
