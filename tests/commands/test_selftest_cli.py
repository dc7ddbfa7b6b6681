"""`ci-eval selftest` end to end in a subprocess: a line per configured rule of every kind,
decided by the real gate on injected heads; the demo's artefact and one with evidence
metrics read as `run` writes them; JSON; bad input exits 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from factories import artefact, spec
from factories import ranked_with_gold_at as at
from suite_paths import REPO_ROOT

N = 24


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ci_eval", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=600, check=False,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"})


def _rows(stdout: str) -> dict[str, list[str]]:
    """The table's lines: rule -> its cells, one per column."""
    out = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 6 and cells[0] != "rule fails":
            out[cells[0]] = cells[1:]
    return out


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """24 questions, gold at rank 1 to 4 (all in the top 5), every sixth one tagged "faq"."""
    path = tmp_path / "base.json"
    runs = artefact([spec(f"q{i:02d}", ["g"], at(1 + i % 4), tags=["faq"] if i % 6 == 0 else [])
                     for i in range(N)])
    path.write_text(json.dumps(runs), encoding="utf-8")
    return path


GATE = """gold_set = "gold.json"
k = 5
[retriever]
type = "run-file"
path = "run.jsonl"

[gate]
min = { "hit@5" = 0.9 }
max_drop = { "hit@5" = 0.05 }
max_new_misses = 1
protected = ["q00"]
tag_min = { faq = { "hit@5" = 1.0 } }
"""


def test_a_line_per_configured_rule_of_every_kind(base, tmp_path):
    (tmp_path / "gate.toml").write_text(GATE)
    r = _cli("selftest", base, "--config", "gate.toml", "--pairs", "12", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = _rows(r.stdout)
    assert list(rows) == ["min hit@5", "max_drop hit@5", "protected", "max_new_misses",
                          "tag_min faq/hit@5", "the gate (any rule)"]
    # no change: nothing fails (a deterministic retriever, the run against itself)
    assert all(cells[0] == "0 %" for cells in rows.values())
    # a floor of 0.9 on 24 hits: 2 lost leave 22/24 = 0.917, 3 leave 21/24 = 0.875
    assert rows["min hit@5"] == ["0 %", "0 %", "0 %", "100 %", "100 %"]
    # at most 1 new miss: 2 lost fail every time
    assert rows["max_new_misses"][1:] == ["0 %", "100 %", "100 %", "100 %"]
    # 5 lost of 24: the one-sided exact test gives 1/32 < 0.05; 3 lost give 1/8
    assert rows["max_drop hit@5"][1:4] == ["0 %", "0 %", "0 %"] and rows["max_drop hit@5"][4] == "100 %"
    # the protected question and the faq tag (4 of 24 questions) fail only when drawn, and
    # with one pushed nothing else does: the gate fails as often as the tag's floor
    for rule in ("protected", "tag_min faq/hit@5"):
        assert 0 < int(rows[rule][4].rstrip(" %")) < 100
    assert rows["the gate (any rule)"][1] == rows["tag_min faq/hit@5"][1] != "0 %"
    assert rows["the gate (any rule)"][2:] == ["100 %", "100 %", "100 %"]
    assert "24 answerable questions, 24 with gold in the top 5; 12 simulated comparisons" in r.stdout


def test_the_demo_s_artefact_gets_a_line_per_rule_of_its_recorded_gate(tmp_path):
    demo = _cli("demo", "--out", "demo", cwd=tmp_path)
    assert demo.returncode in (0, 1), demo.stderr
    r = _cli("selftest", "demo/base.json", "--pairs", "4", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    gate = json.loads((tmp_path / "demo" / "base.json").read_text())["config"]["gate"]
    expected = [f"min {m}" for m in gate.get("min", {})] + [f"max_drop {m}" for m in gate.get("max_drop", {})]
    rows = _rows(r.stdout)
    assert expected and all(name in rows for name in expected), r.stdout
    assert rows["the gate (any rule)"][0] == "0 %"


DOC = "".join(f"line {i:03d} of the guide says something about topic {i % 7}.\n" for i in range(80))


def _span_project(folder: Path) -> None:
    """Eight questions, each with its evidence in a 60-character chunk found at rank 1."""
    folder.mkdir()
    chunks = [{"id": f"c{j:02d}", "doc": "guide.md", "start": 60 * j, "end": 60 * j + 60,
               "text": DOC[60 * j:60 * j + 60]} for j in range(len(DOC) // 60)]
    (folder / "index.jsonl").write_text("\n".join(map(json.dumps, [{"version": "v1"}, *chunks])) + "\n")
    questions = [{"id": f"q{i}", "question": f"topic {i}?", "gold": [],
                  "evidence": [{"doc": "guide.md", "start": 60 * i * 3 + 5, "end": 60 * i * 3 + 50}]}
                 for i in range(8)]
    ids = [c["id"] for c in chunks]
    (folder / "run.jsonl").write_text("".join(
        json.dumps({"id": q["id"], "results": [[cid, 20.0 - r] for r, cid in enumerate(
            [ids[3 * i]] + [x for x in ids if x != ids[3 * i]][:14])]}) + "\n"
        for i, q in enumerate(questions)))
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": questions}))
    metrics = json.dumps(["hit@5", "mrr", "evidence_recall@5", "evidence_recall@15"])
    (folder / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = 5\nmetrics = {metrics}\n'
        '[retriever]\ntype = "run-file"\npath = "run.jsonl"\n[index]\nmanifest = "index.jsonl"\n'
        '[gate]\nmin = { "evidence_recall@5" = 0.8 }\nmax_new_misses = 0\n')


def test_an_artefact_with_evidence_metrics_gets_a_line_per_rule(tmp_path):
    project = tmp_path / "p"
    _span_project(project)
    run = _cli("run", "--out", "base.json", "--quiet", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    r = _cli("selftest", "base.json", "--pairs", "6", cwd=project)
    assert r.returncode == 0, r.stderr
    rows = _rows(r.stdout)
    assert list(rows) == ["min evidence_recall@5", "max_new_misses", "the gate (any rule)"]
    assert rows["max_new_misses"] == ["0 %", "100 %", "100 %", "100 %", "100 %"]
    # every question's evidence in its rank-1 chunk: evidence_recall@5 is 1; a pushed
    # question scores 0 at depth 5, so 2 of 8 leave 6/8 = 0.75, under the floor of 0.8
    assert rows["min evidence_recall@5"] == ["0 %", "0 %", "100 %", "100 %", "100 %"]
    assert "evidence_recall@5, evidence_recall@15: measured on document characters" in r.stdout


def test_json_is_the_same_simulation(base, tmp_path):
    r = _cli("selftest", base, "--no-config", "--max-drop", "mrr=0.1", "--pairs", "5",
             "--format", "json", "--seed", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["questions"] == N and out["pairs"] == 5
    assert out["columns"] == ["no change", "1 pushed past k", "2 pushed past k", "3 pushed past k",
                              "5 pushed past k"]
    assert [(x["rule"], x["subject"]) for x in out["rules"]] == [("max_drop", "mrr")]


@pytest.mark.parametrize("flags, words", [(["--jitter", "2"], "--jitter"),
                                          (["--pairs", "0"], "--pairs")])
def test_bad_flags_exit_2_in_one_line(base, tmp_path, flags, words):
    r = _cli("selftest", base, "--no-config", *flags, cwd=tmp_path)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_missing_artefact_exits_2(tmp_path):
    r = _cli("selftest", tmp_path / "nope.json", "--no-config", cwd=tmp_path)
    assert r.returncode == 2 and "nope.json" in r.stderr and "Traceback" not in r.stderr
