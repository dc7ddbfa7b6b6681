"""`ci-eval compare` end to end in a subprocess: exit codes 0, 1 and 2, and its outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from factories import artefact, spec
from factories import ranked_with_gold_at as at
from suite_paths import REPO_ROOT

REPO = REPO_ROOT


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
    r = _cli(runs["base"], runs["head"], "--no-config", "--min", "hit@5=0.9", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    verdict = r.stdout.splitlines()[1]
    assert verdict.startswith("### ❌ 3 questions lost their gold chunk at k=5: ")
    assert "Gate failed: hit@5 is 0.700, below the floor 0.900" in verdict


def test_max_drop_flag(runs, tmp_path):
    # 3 of 10 lost, none gained: McNemar p = 2 / 2**3 = 0.25, within noise
    assert _cli(runs["base"], runs["head"], "--no-config", "--max-drop", "hit@5=0.1", cwd=tmp_path).returncode == 0
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
    r = _cli(runs["base"], runs["head"], "--no-config", "--format", "json", "--summary-out", summary,
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


def _write(tmp_path: Path, name: str, data: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
    return path


def _pair(tmp_path: Path, base: dict, head: dict) -> tuple[Path, Path]:
    return _write(tmp_path, "base.json", base), _write(tmp_path, "head.json", head)


def test_the_config_diff_leads_with_what_changes_results_and_hides_empty_tables(tmp_path):
    common = {"gate": {"min": {"hit@5": 0.8}}, "report": {"title": "docs"}}
    base = artefact([spec(f"q{i}", ["g"], at(1)) for i in range(8)], config={
        **common, "retriever": {"type": "python", "params": {"b": 0.75}}, "index": {}})
    head = artefact([spec(f"q{i}", ["g"], at(1)) for i in range(8)], config={
        **common, "report": {"title": "docs v2"}, "gate": {},
        "retriever": {"type": "python", "params": {"b": 0.9}}})
    head["config"]["k"] = base["config"]["k"] = 5
    r = _cli(*_pair(tmp_path, base, head), cwd=tmp_path)
    changed = next(x for x in r.stdout.splitlines() if x.startswith("**Changed:**"))
    parts = changed.split("; ")
    assert parts[0] == "**Changed:** `retriever.params.b` `0.75` → `0.9`"
    assert "`gate.min.hit@5` `0.8` → `(unset)`" in changed
    assert "`gate` `(unset)`" not in r.stdout and "`index`" not in r.stdout


def test_a_baseline_file_is_named_and_a_missing_commit_and_dirty_tree_said(tmp_path):
    qs = [spec(f"q{i}", ["g"], at(1)) for i in range(8)]
    base, head = artefact(qs), artefact(qs)
    base["git"] = None
    head["git"]["dirty"] = True
    _pair(tmp_path, base, head)
    # named from the folder they are in: a long temporary path (a parallel worker's) is cut
    # to fit the line, which would cut the name this test reads
    r = _cli("base.json", "head.json", cwd=tmp_path)
    line = r.stdout.splitlines()[2]
    assert line.startswith("**Baseline:** artefact `")
    assert "base.json` (no commit was recorded in it)" in line and "`?`" not in line
    assert "head built from a dirty tree" in line


def test_a_tie_in_the_failure_matrix_is_called_a_tie(tmp_path):
    # one question per failure cell: retrieved & wrong, missed & wrong, missed & correct
    rows = [(1, True), (1, True), (1, False), (None, False), (None, True)]
    qs = [spec(f"q{i}", ["g"], at(r), answer_correct=c) for i, (r, c) in enumerate(rows)]
    r = _cli(*_pair(tmp_path, artefact(qs), artefact(qs)), cwd=tmp_path)
    assert "Largest failure cells, a tie at 1 each: **retrieved, wrong (generation)** and " \
        "**missed, wrong (retrieval)** and **missed, correct (own knowledge)**" in r.stdout
    assert "Largest failure cell:" not in r.stdout


def test_tags_worst_first_rank_by_the_worst_change_over_the_shown_metrics(tmp_path):
    # "steady" keeps hit@5 but its mrr falls 1 -> 1/4; "shaky" loses a little hit@5 only
    steady = [spec(f"s{i}", ["g"], at(1), tags=["steady"]) for i in range(4)]
    steady_head = [spec(f"s{i}", ["g"], at(4), tags=["steady"]) for i in range(4)]
    shaky = [spec(f"k{i}", ["g"], at(5), tags=["shaky"]) for i in range(4)]
    shaky_head = [spec(f"k{i}", ["g"], at(6 if i == 0 else 5), tags=["shaky"]) for i in range(4)]
    r = _cli(*_pair(tmp_path, artefact(steady + shaky), artefact(steady_head + shaky_head)),
             cwd=tmp_path)
    table = r.stdout.split("#### By tag (worst first)\n\n", 1)[1].split("\n\n", 1)[0]
    rows = [x.split("|")[1].strip() for x in table.splitlines()[2:]]
    # worst change: steady mrr 1/4 - 1 = -0.75; shaky hit@5 -1/4 = -0.25 (its mrr -0.033)
    assert rows == ["steady", "shaky"]


def test_overlapping_scores_explain_the_notation_and_suggest_the_least_wrong_cutoff(tmp_path):
    answerable = [spec(f"a{i}", ["g"], at(1), top=t) for i, t in enumerate([3.0, 8.0, 9.0, 10.0])]
    unanswerable = [spec(f"u{i}", ranking=["x"], unanswerable=True, top=t)
                    for i, t in enumerate([2.0, 8.5])]
    qs = answerable + unanswerable + [spec(f"q{i}", ["g"], at(1)) for i in range(6)]
    r = _cli(*_pair(tmp_path, artefact(qs), artefact(qs)), cwd=tmp_path)
    # 2.5 answers every answerable question and one unanswerable (8.5): 0 + 1 mistakes
    assert (f"The cutoff with the fewest mistakes is **{(2.0 + 3.0) / 2:.3g}**: "
            '0 false "not found" (answerable questions under it) and 1 false answer') in r.stdout
    assert '"none (a + b overlap)": a answerable questions score at or below' in r.stdout


def test_the_detectable_change_line_says_it_depends_on_the_spread(runs, tmp_path):
    r = _cli(runs["base"], runs["head"], cwd=tmp_path)
    assert "it depends on how much the per-question differences spread" in r.stdout


def test_version_2_artefacts_give_their_version_1_twins_report_byte_for_byte(tmp_path):
    from factories import as_v2

    from ci_eval.core.artefact.artefact import dumps

    ranks = [1, 2, 1, 3, 1, 1, 2, 1, 4, 1]
    base = artefact([spec(f"q{i}", ["g"], at(r), tags=["faq"]) for i, r in enumerate(ranks)]
                    + [spec("u1", unanswerable=True, ranking=["z"])])
    head = artefact([spec(f"q{i}", ["g"], at(None if i < 3 else r), tags=["faq"]) for i, r in enumerate(ranks)]
                    + [spec("u1", unanswerable=True, ranking=["z"]), spec("e1", ["g"], error="timeout")])
    outputs = {}
    for version, convert in ((1, lambda d: d), (2, as_v2)):
        folder = tmp_path / f"v{version}"
        folder.mkdir()
        for name, data in (("base", base), ("head", head)):
            (folder / f"{name}.json").write_text(dumps(convert(data)), encoding="utf-8")
        r = _cli("base.json", "head.json", "--no-config", "--json-out", "r.json", "--summary-out", "s.md",
                 cwd=folder)
        assert r.returncode in (0, 1), r.stderr
        outputs[version] = (r.stdout, (folder / "r.json").read_text(), (folder / "s.md").read_text())
    assert outputs[2] == outputs[1]
    assert "Regressions" in outputs[2][0]
