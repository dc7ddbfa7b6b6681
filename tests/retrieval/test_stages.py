"""A pipeline of the test's own through `ci-eval run` and `ci-eval compare`: BM25 pool of
50 -> a term-overlap reranker -> top 5 -> a packer's character budget, with faults injected
at each stage (tests/support/staged_retriever.py). The comment must name every injected
loss at the stage it was injected in, and nothing else; and a scripted agent whose second
call finds the gold chunk is a hit at call 2."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from projects import cli
from suite_paths import REPO_ROOT

QUESTIONS = 30
LONG = 800  # the two long chunks; the packer's budget fits one of them, not two
BUDGET = 1000
FAULTS = {"pool_miss": ["q03", "q11", "q27"], "demote": ["q05", "q08", "q14", "q20"], "crowd": ["q09", "q22"]}
STAGE_OF_FAULT = {"pool_miss": "pool", "demote": "rerank", "crowd": "packed"}


def _corpus() -> dict:
    chunks = {f"c{i:02d}": f"topic{i} fact{i} " + " ".join(f"gold{i}w{j}" for j in range(8))
              for i in range(QUESTIONS)}
    chunks.update({f"d{j:03d}": f"topic{j % QUESTIONS} " + " ".join(f"filler{j}w{n}" for n in range(8))
                   for j in range(2 * QUESTIONS)})
    chunks.update({name: "x" * (LONG - 1) + name[-1] for name in ("long1", "long2")})
    return chunks


def _project(folder: Path, stages: str, retriever_params: dict) -> Path:
    folder.mkdir()
    corpus = _corpus()
    (folder / "corpus.json").write_text(json.dumps(corpus))
    (folder / "gold_of.json").write_text(json.dumps({f"q{i:02d}": f"c{i:02d}" for i in range(QUESTIONS)}))
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "index_version": "v1", "questions": [
        {"id": f"q{i:02d}", "question": f"what about topic{i} fact{i}", "gold": [f"c{i:02d}"]}
        for i in range(QUESTIONS)]}))
    (folder / "manifest.json").write_text(json.dumps(
        {"version": "v1", "chunks": [{"id": cid, "text": text} for cid, text in corpus.items()]}))
    shutil.copy(REPO_ROOT / "tests" / "support" / "staged_retriever.py", folder / "retriever.py")
    (folder / "ci-eval.toml").write_text(
        'gold_set = "gold.json"\nk = 5\n' + stages +
        '[index]\nmanifest = "manifest.json"\n'
        f'[retriever]\ntype = "command"\ncommand = [{json.dumps(sys.executable)}, "retriever.py"]\n'
        "params = { " + ", ".join(f"{key} = {json.dumps(ids)}" for key, ids in retriever_params.items()) + " }\n")
    return folder


PIPELINE = f"""
[[stages]]
name = "pool"
depth = 50
[[stages]]
name = "rerank"
depth = 5
[[stages]]
name = "packed"
chars = {BUDGET}
[gate]
stage_min = {{ pool = 0.95 }}
"""


def _run(folder: Path) -> dict:
    done = cli("run", "--quiet", "--out", "run.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return json.loads((folder / "run.json").read_text())


def _lost_rows(comment: str) -> dict:
    """The comment's "lost their gold chunk" table: question id -> the stage it names."""
    table = comment.split("**Lost their gold chunk against the base**", 1)[1].split("\n\n", 2)[1]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([^`]+)` +\| (\w+) ", table, re.M)}


def test_the_comment_attributes_every_injected_loss_to_its_stage(tmp_path):
    base = _project(tmp_path / "base", PIPELINE, {})
    head = _project(tmp_path / "head", PIPELINE, FAULTS)
    base_run, head_run = _run(base), _run(head)

    # Derived from the faults: each injected question at the stage its fault acts on.
    expected = {qid: STAGE_OF_FAULT[fault] for fault, ids in FAULTS.items() for qid in ids}
    assert {qid: r for qid, r in base_run["stages"]["questions"].items() if not all(r["ranks"])} == {}
    chain = [s["name"] for s in head_run["stages"]["chain"]]
    assert chain == ["pool", "rerank", "results", "packed"]
    recorded = {qid: chain[[bool(r) for r in rec["ranks"]].index(False)]
                for qid, rec in head_run["stages"]["questions"].items() if not all(rec["ranks"])}
    assert recorded == expected

    done = cli("compare", str(base / "run.json"), str(head / "run.json"), "--config", str(head / "ci-eval.toml"),
               cwd=head)
    comment = done.stdout
    assert _lost_rows(comment) == expected  # 100 % of the injected losses, at the right stage, nothing else
    counts = {stage: sum(1 for s in expected.values() if s == stage) for stage in ("pool", "rerank", "packed")}
    by = " · ".join(f"{stage} {n}" for stage, n in counts.items())
    assert f"first stage that lost it: {by})" in comment
    assert f"- pool never held the gold in its top 50 on {counts['pool']} questions." in comment
    assert (f"- rerank dropped the gold out of its top 5 on {counts['rerank']} questions pool held in its top 50."
            in comment)
    # The pool's floor is its own rule: 27 of 30 is below 0.95, whatever the final list does.
    pool_recall = (QUESTIONS - counts["pool"]) / QUESTIONS
    assert done.returncode == 1
    assert f"recall of stage 'pool' at its top 50 is {pool_recall:.3f}, below the floor 0.950" in comment
    # compare --format json carries the same stages as the comment
    data = json.loads(cli("compare", str(base / "run.json"), str(head / "run.json"), "--config",
                          str(head / "ci-eval.toml"), "--format", "json", cwd=head).stdout)
    assert {q["id"]: q["stage"] for q in data["stages"]["lost"]} == expected
    assert [s["stage"] for s in data["stages"]["head"]] == chain
    pool = data["stages"]["head"][0]
    assert abs(pool["recall"] - pool_recall) < 1e-12 and pool["lost"] == counts["pool"]
    assert data["calls"] is None


def test_a_sharded_staged_run_merges_to_the_stage_records_of_the_whole_run(tmp_path):
    folder = _project(tmp_path / "sharded", PIPELINE, {**FAULTS, "calls": ["q01", "q02"]})
    whole = _run(folder)
    for i in (1, 2, 3):
        done = cli("run", "--quiet", "--shard", f"{i}/3", "--out", f"part-{i}.json", cwd=folder)
        assert done.returncode == 0, done.stderr
    parts = [json.loads((folder / f"part-{i}.json").read_text()) for i in (1, 2, 3)]
    assert all(0 < len(p["stages"]["questions"]) < QUESTIONS for p in parts)  # each part holds a share
    done = cli("merge", "part-1.json", "part-2.json", "part-3.json", "--out", "merged.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    merged = json.loads((folder / "merged.json").read_text())
    # Key for key and in the same order as the unsharded run, so the floor and the report read the same
    assert list(merged["stages"]["questions"]) == list(whole["stages"]["questions"])
    assert merged["stages"] == whole["stages"] and merged["calls"] == whole["calls"]
    assert [k for k in merged if k in ("summary", "history", "stages", "calls", "cache")] == \
        [k for k in whole if k in ("summary", "history", "stages", "calls", "cache")]


def test_a_cached_staged_run_still_records_every_question_s_stages(tmp_path):
    folder = _project(tmp_path / "cached", PIPELINE, FAULTS)
    toml = folder / "ci-eval.toml"
    toml.write_text(toml.read_text().replace('[retriever]\n', '[retriever]\ncache = "cache"\n'))
    first, second = _run(folder), _run(folder)
    # a cached entry holds the answer's stages: nothing is asked again, nothing lost
    assert second["cache"] == {"hits": QUESTIONS, "misses": 0}
    assert len(second["stages"]["questions"]) == QUESTIONS
    assert second["stages"] == first["stages"]


def test_a_second_call_that_finds_the_gold_chunk_is_a_hit_at_call_2(tmp_path):
    agent = ["q00", "q01"]
    folder = _project(tmp_path / "agent", "", {"calls": agent})
    run = _run(folder)
    calls = run["calls"]["questions"]
    assert set(calls) == set(agent)
    for qid in agent:
        assert calls[qid]["found_at"] == 2 and calls[qid]["sizes"] == [10, 2]
        assert calls[qid]["final_hit"] is False  # the concatenation cut at k=5 hides it
        row = next(q for q in run["questions"] if q[0] == qid)
        assert row[run["question_fields"].index("first_gold_rank")] == 11
    done = cli("compare", "--no-base", str(folder / "run.json"), cwd=folder)
    assert f"found at call 2: {len(agent)}" in done.stdout
    assert f"{len(agent)} questions found by a call are missed by the final list cut at k" in done.stdout


def test_a_calls_budget_counts_the_chunks_sent_before_the_gold(tmp_path):
    folder = _project(tmp_path / "agent", "[calls]\nbudget = 10\n", {"calls": ["q00"]})
    run = _run(folder)
    # ten misses sent by call 1, the gold chunk eleventh: over a budget of 10
    assert run["calls"] == {"budget": 10, "questions": {"q00": {
        "sizes": [10, 2], "ranks": [[], [1]], "found_at": None, "final_hit": False}}}


def test_a_python_retriever_answers_with_stages_through_the_worker(tmp_path):
    folder = tmp_path / "py"
    folder.mkdir()
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": f"q{i}", "question": f"question {i}", "gold": [f"g{i}"]} for i in range(4)]}))
    # q0's gold in the pool only, q1's nowhere, q2 and q3 held to the end
    (folder / "pipeline.py").write_text(
        "def search(question, depth):\n"
        "    n = int(question.split()[-1])\n"
        "    pool = [(f'd{j}', 10.0 - j) for j in range(6)] + ([] if n == 1 else [(f'g{n}', 1.0)])\n"
        "    final = pool[-1:] + pool[:-1] if n > 1 else [p for p in pool if not p[0].startswith('g')]\n"
        "    return {'stages': {'pool': pool}, 'results': [(cid, 20.0 - r) for r, (cid, _) in enumerate(final)]}\n")
    (folder / "ci-eval.toml").write_text(
        'gold_set = "gold.json"\nk = 2\n[[stages]]\nname = "pool"\ndepth = 10\n'
        '[retriever]\ntype = "python"\ntarget = "pipeline:search"\n')
    run = _run(folder)
    records = run["stages"]["questions"]
    # derived from the lists above: the pool holds g0, g2, g3 at rank 7 (after six d's)
    assert {qid: r["ranks"] for qid, r in records.items()} == {
        "q0": [[7], []], "q1": [[], []], "q2": [[7], [1]], "q3": [[7], [1]]}


def _forged(path: Path, extra: int, in_layout: bool) -> None:
    """``extra`` stage records for questions the run never asked, each a pool that lost its
    gold: enough, if they were read, to pull the Stages table's pool recall down."""
    forged = {f"zz{i:02d}": {"gold": 1, "ranks": [[], [], [], []]} for i in range(extra)}
    if in_layout:  # the writer's one line for the key, so the reader's fast path reads it
        lines = path.read_text().splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if line.startswith(' "stages": '))
        body = json.loads(lines[at][len(' "stages": '):].rstrip().rstrip(","))
        body["questions"].update(forged)
        ending = "," if lines[at].rstrip().endswith(",") else ""
        lines[at] = ' "stages": ' + json.dumps(body, separators=(",", ":")) + ending + "\n"
        path.write_text("".join(lines))
    else:
        data = json.loads(path.read_text())
        data["stages"]["questions"].update(forged)
        path.write_text(json.dumps(data))


@pytest.mark.parametrize("in_layout", [True, False])
def test_stage_records_for_questions_the_run_never_asked_are_refused(tmp_path, in_layout):
    base = _project(tmp_path / "base", PIPELINE, {})
    head = _project(tmp_path / "head", PIPELINE, {})
    _run(base)
    _run(head)
    _forged(head / "run.json", 25, in_layout)
    done = cli("compare", str(base / "run.json"), str(head / "run.json"), "--config", str(head / "ci-eval.toml"),
               cwd=head)
    assert done.returncode == 2, done.stdout
    lines = done.stderr.strip().splitlines()
    # every forged record named, up to the refusal's bound of 20 lines; no comment, no table
    assert len(lines) == 20 and done.stdout == ""
    assert lines[0] == (f"ci-eval: error: {head / 'run.json'}:stages.questions.zz00: "
                        "a record for a question this run does not hold")
    done = cli("merge", str(head / "run.json"), "--out", str(tmp_path / "m.json"), cwd=head)
    assert done.returncode == 2 and "a record for a question this run does not hold" in done.stderr
