"""The action with `[answers]`: the failure matrix's cells as an output, and the gate's cap
on its "missed, wrong" cell, through action.yml's own steps against the GitHub stand-in."""

from __future__ import annotations

import json

from action_harness import CONFIG, STRICT_GOLD, bodies, pr_event, run_action
from run_files import read_run


def test_failure_matrix_output_and_the_missed_wrong_cap(gh, checkout, tmp_path):
    # Every answer graded wrong: the one question the strict gold set's retriever misses
    # ("zeta") lands in "missed, wrong", the others in "retrieved, wrong".
    (checkout / "eval" / "answers.jsonl").write_text(
        "".join(json.dumps({"id": q["id"], "correct": False}) + "\n" for q in STRICT_GOLD["questions"]))
    (checkout / "answers.toml").write_text(CONFIG.format(
        gold="eval/strict-gold.json", gate='answers = "eval/answers.jsonl"\n[gate]\nmax_missed_wrong = 0\n'))
    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), config="answers.toml")

    head = read_run(job.bundle / "ci-eval-run.json")
    measured = [q for q in head["questions"] if q["status"] == "ok"]
    missed = [q["id"] for q in measured if not q["metrics"]["hit@1"]]
    assert len(missed) == 1
    assert json.loads(job.outputs["failure-matrix"]) == {
        "retrieved_correct": 0, "retrieved_wrong": len(measured) - len(missed),
        "missed_wrong": len(missed), "missed_correct": 0, "unknown": 0}
    assert job.outputs["verdict"] == "fail" and job.code == 1, job.stderr
    [body] = bodies(gh)
    assert "Answer correctness from answers file `eval/answers.jsonl`" in body
    assert f"1 question missed the gold chunk at k and got a wrong answer, of {len(measured)} with a verdict (at " \
           "most 0 allowed)" in body
