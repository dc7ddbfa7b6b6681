"""`ci-eval compare` end to end in a subprocess: exit codes 0, 1 and 2, and its outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from factories import artefact, spec
from factories import ranked_with_gold_at as at

REPO = Path(__file__).resolve().parents[1]


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ci_eval", "compare", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def runs(tmp_path: Path):
    ranks = [1, 2, 1, 3, 1, 1, 2, 1, 4, 1]
    base = artefact([spec(f"q{i}", ["g"], at(r)) for i, r in enumerate(ranks)])
    head = artefact([spec(f"q{i}", ["g"], at(None if i < 3 else r)) for i, r in enumerate(ranks)])
    paths = {}
    for name, data in (("base", base), ("head", head)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
    return paths


def test_passing_gate_exits_0(runs, tmp_path):
    r = _cli(runs["base"], runs["base"], "--min", "hit@5=0.9", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("<!-- ci-eval:report -->\n### ✅ No change")


def test_failing_floor_exits_1_after_printing_the_report(runs, tmp_path):
    r = _cli(runs["base"], runs["head"], "--min", "hit@5=0.9", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "### ❌ Below the floor: hit@5 is 0.700" in r.stdout


def test_max_drop_flag(runs, tmp_path):
    # 3 of 10 lost, none gained: McNemar p = 2 / 2**3 = 0.25, within noise
    assert _cli(runs["base"], runs["head"], "--max-drop", "hit@5=0.1", cwd=tmp_path).returncode == 0
    r = _cli(runs["base"], runs["head"], "--max-drop", "hit@5=0.1", "--config",
             _config(tmp_path, 'regressions = "always"'), cwd=tmp_path)
    assert r.returncode == 1, r.stderr


def _config(tmp_path: Path, gate: str) -> Path:
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": "q0", "question": "?", "gold": ["g"]}]}), encoding="utf-8")
    cfg = tmp_path / "ci-eval.toml"
    cfg.write_text(f'gold_set = "gold.json"\nk = 5\n[retriever]\ntype = "run-file"\n'
                   f'path = "run.trec"\n[gate]\n{gate}\n', encoding="utf-8")
    return cfg


def test_config_gate_table_is_used(runs, tmp_path):
    cfg = _config(tmp_path, 'min = { "hit@5" = 0.95 }')
    r = _cli(runs["base"], runs["head"], "--config", cfg, cwd=tmp_path)  # head: 7/10
    assert r.returncode == 1, r.stderr
    # a flag overrides the config's floor for the same metric
    assert _cli(runs["base"], runs["head"], "--config", cfg, "--min", "hit@5=0.5",
                cwd=tmp_path).returncode == 0


def test_no_base_is_a_first_run(runs, tmp_path):
    r = _cli("--no-base", runs["head"], "--min", "hit@5=0.5", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "No baseline" in r.stdout.splitlines()[1]


def test_json_and_side_outputs(runs, tmp_path):
    summary, svg, js = tmp_path / "summary.md", tmp_path / "plot.svg", tmp_path / "r.json"
    r = _cli(runs["base"], runs["head"], "--format", "json", "--summary-out", summary,
             "--svg-out", svg, "--json-out", js, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["passed"] is True and data["compared"] == 10
    assert {q["id"] for q in data["regressions"]} == {"q0", "q1", "q2"}
    assert summary.read_text(encoding="utf-8").startswith("<!-- ci-eval:report -->")
    assert svg.read_text(encoding="utf-8").startswith("<svg")
    assert json.loads(js.read_text(encoding="utf-8")) == data


@pytest.mark.parametrize("args", [
    ["BASE"],  # HEAD missing
    ["BASE", "HEAD", "HEAD"],
    ["--no-base", "BASE", "HEAD"],
    ["BASE", "HEAD", "--min", "hit@5"],
    ["BASE", "HEAD", "--max-drop", "hit@5=-1"],
    ["BASE", "missing.json"],
    ["BASE", "GARBAGE"],
    ["BASE", "FUTURE"],
])
def test_bad_input_exits_2(runs, tmp_path, args):
    (tmp_path / "garbage.json").write_text("{not json", encoding="utf-8")
    future = json.loads(runs["head"].read_text(encoding="utf-8"))
    future["schema_version"] = 99
    (tmp_path / "future.json").write_text(json.dumps(future), encoding="utf-8")
    names = {"BASE": runs["base"], "HEAD": runs["head"], "GARBAGE": tmp_path / "garbage.json",
             "FUTURE": tmp_path / "future.json"}
    r = _cli(*[names.get(a, a) for a in args], cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("ci-eval: error:") and r.stdout == ""
