"""A real project folder (gold set, config) run through `ci-eval run` as a subprocess, for
the tests of the framework retriever types."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from framework_corpus import GOLD
from run_files import read_run
from suite_paths import SUPPORT

# No framework phones home or fetches anything during the tests.
QUIET_ENV = {
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "LANGCHAIN_TRACING_V2": "false",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}


def cli(*args, cwd, env=None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **QUIET_ENV, "PYTHONPATH": str(SUPPORT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=cwd, capture_output=True,
                          text=True, env=full_env, timeout=300, check=False)


def run_project(root: Path, retriever: str, k: int = 1, gold: dict = GOLD):
    """Write the project, run it; the process and the artefact (None when none was written)."""
    (root / "gold.json").write_text(json.dumps(gold))
    (root / "ci-eval.toml").write_text(f'gold_set = "gold.json"\nk = {k}\n\n[retriever]\n{retriever}\n')
    done = cli("run", "--out", "run.json", "--quiet", cwd=root)
    out = root / "run.json"
    return done, (read_run(out) if out.exists() else None)


def rankings(artefact: dict) -> dict[str, list[tuple[str, float]]]:
    return {q["id"]: [(r["id"], r["score"]) for r in q["ranking"]] for q in artefact["questions"]}


def errors(artefact: dict) -> dict[str, str]:
    return {q["id"]: q["error"] for q in artefact["questions"] if q["status"] == "error"}


def assert_refused_by_check_and_run(root: Path, retriever: str, place: str, reason: str) -> None:
    """``check`` and ``run`` both exit 2 with ``reason`` at ``place`` of the config, and no
    artefact is written."""
    done, art = run_project(root, retriever)
    checked = cli("check", cwd=root)
    for out in (done, checked):
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith(f"ci-eval: error: ci-eval.toml:{place}: {reason}"), out.stderr
    assert art is None
