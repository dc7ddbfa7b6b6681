"""Every command's --help stays cheap: listing or describing commands must not import the
heavy libraries (numpy, tabulate, jsonschema, PyGithub) that only running them needs. The
times themselves are measured in benchmarks/bench_pipeline.py, not here."""

import json
import subprocess
import sys

import pytest

from ci_eval.commands import COMMANDS

HEAVY = ("numpy", "tabulate", "jsonschema", "github")
_PROBE = f"""
import contextlib, io, json, sys
HEAVY = {HEAVY!r}
from ci_eval.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)))
"""


def heavy_imports(*argv: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [("--help",), ("--version",), *((name, "--help") for name in COMMANDS)],
                         ids=" ".join)
def test_help_imports_no_heavy_library(argv):
    assert heavy_imports(*argv) == []


def test_the_probe_sees_a_heavy_import():
    # `metrics` lists the registry, which needs numpy: the probe must notice it.
    assert "numpy" in heavy_imports("metrics")
