"""`ci-eval selftest` end to end in a subprocess: the table, JSON, bad input exits 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from factories import artefact, spec
from factories import ranked_with_gold_at as at
from suite_paths import REPO_ROOT


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ci_eval", "selftest", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def base(tmp_path: Path) -> Path:
    path = tmp_path / "base.json"
    runs = artefact([spec(f"q{i:02d}", ["g"], at(1 + i % 4)) for i in range(24)])
    path.write_text(json.dumps(runs), encoding="utf-8")
    return path


def test_the_table_names_every_scenario_and_rule(base, tmp_path):
    r = _cli(base, "--no-config", "--max-drop", "hit@5=0.05", "--pairs", "10", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for scenario in ("A/A", "gold pushed past k", "top k shuffled",
                     "gold deleted from the index", "re-chunk"):
        assert f"| {scenario}" in r.stdout
    assert "max_drop hit@5 fails" in r.stdout and "24 answerable questions" in r.stdout
    assert "a drop of 0.05 in hit@5 is detected with 80 % power from" in r.stdout


def test_json_is_the_same_simulation(base, tmp_path):
    r = _cli(base, "--no-config", "--max-drop", "mrr=0.1", "--pairs", "5", "--format", "json",
             "--seed", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["questions"] == 24 and out["pairs"] == 5
    assert [row["scenario"] for row in out["rows"]][0] == "A/A"
    assert set(out["rows"][0]["rules"]) == {"mrr"}


@pytest.mark.parametrize("flags, words", [(["--share", "2"], "--share"),
                                          (["--pairs", "0"], "--pairs")])
def test_bad_flags_exit_2_in_one_line(base, tmp_path, flags, words):
    r = _cli(base, "--no-config", *flags, cwd=tmp_path)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_missing_artefact_exits_2(tmp_path):
    r = _cli(tmp_path / "nope.json", "--no-config", cwd=tmp_path)
    assert r.returncode == 2 and "nope.json" in r.stderr and "Traceback" not in r.stderr
