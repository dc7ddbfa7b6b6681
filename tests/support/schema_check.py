"""check-jsonschema, the CLI that validates YAML against the schema catalogue's GitHub and
GitLab schemas, as the tests find it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest


def check_jsonschema():
    exe = shutil.which("check-jsonschema") or str(Path(sys.executable).with_name("check-jsonschema"))
    if not Path(exe).exists():
        pytest.skip("check-jsonschema is not installed (pip install -e '.[test]')")
    return exe
