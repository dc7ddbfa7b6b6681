"""``ci-eval gold ...`` through the real CLI in a subprocess, and what a refusal must look like."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PREFIX = "ci-eval: error: "


def gold(*args, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "ci_eval", "gold", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def refused(result: subprocess.CompletedProcess) -> list[str]:
    """The error lines of a run that must have ended with exit 2, no traceback, no output."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == "", result.stdout
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith(PREFIX) for line in lines), result.stderr
    return [line[len(PREFIX):] for line in lines]
