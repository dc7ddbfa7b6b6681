"""Small real projects in tmp folders, run through the real CLI in a subprocess.

A project is a folder with a gold set, a config and the user's own retriever (a Python
module or an executable script), written by the test that uses it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from run_files import read_run


def cli(*args, cwd, env=None):
    """``ci-eval ARGS`` in ``cwd``, as a user runs it (nothing extra on PYTHONPATH)."""
    full_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=cwd, capture_output=True,
                          text=True, env=full_env, timeout=120)


def questions(n_answerable: int = 3, n_unanswerable: int = 1) -> list[dict]:
    """``a1..aN`` answered by chunk ``c1..cN``; ``u1..uM`` unanswerable."""
    qs = [{"id": f"a{i}", "question": f"answerable {i}", "gold": [f"c{i}"], "tags": ["t"]}
          for i in range(1, n_answerable + 1)]
    qs += [{"id": f"u{i}", "question": f"unanswerable {i}", "gold": [], "unanswerable": True}
           for i in range(1, n_unanswerable + 1)]
    return qs


def write_gold(folder: Path, qs: list[dict] | None = None, name: str = "gold.json") -> Path:
    path = folder / name
    path.write_text(json.dumps({"schema_version": 1, "questions": questions() if qs is None else qs}))
    return path


def write_module(folder: Path, name: str, source: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def write_script(folder: Path, name: str, source: str) -> Path:
    """An executable Python script speaking the command protocol."""
    path = folder / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(source))
    path.chmod(0o755)
    return path


def write_config(folder: Path, retriever: str, extra: str = "", k: int = 1, name: str = "ci-eval.toml") -> Path:
    path = folder / name
    path.write_text(f'gold_set = "gold.json"\nk = {k}\n{textwrap.dedent(extra)}\n[retriever]\n'
                    f"{textwrap.dedent(retriever)}\n")
    return path


# A retriever that finds chunk cN for "answerable N" and scores unanswerable questions low.
GOOD_RETRIEVER = """
def search(question, depth):
    n = question.split()[-1]
    if question.startswith("answerable"):
        return [("c" + n, 2.0), ("x" + n, 1.0)]
    return [("x" + n, 0.1)]
"""


def artefact(folder: Path, name: str = "run.json") -> dict:
    return read_run(folder / name)


def errors_of(art: dict) -> dict[str, str]:
    return {q["id"]: q["error"] for q in art["questions"] if q["status"] == "error"}
