"""The issue's cases through the real CLI (`run` twice on a project's own retriever, then
`compare`): too few moved questions are never significant, and a decision at zero does not
hang on floating-point noise."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest


def _verdict_projects():
    # the small projects of test_verdict_cli.py (a Python retriever with fixed rankings)
    spec = importlib.util.spec_from_file_location(
        "verdict_projects", Path(__file__).with_name("test_verdict_cli.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_V = _verdict_projects()
K, cli, filler, hits, project, questions, run, with_at = (
    _V.K, _V.cli, _V.filler, _V.hits, _V.project, _V.questions, _V.run, _V.with_at)


def _both_runs(root, qs, base: dict, head: dict):
    """The project's base and head runs written by `ci-eval run`, in ``root``."""
    project(root, qs, {"base": base, "head": head})
    run(root, "base.json")
    run(root, "head.json", "head")
    return root


@pytest.fixture(scope="module")
def four_moved(tmp_path_factory):
    """100 questions at rank 1; head moves 4 of them to rank 2."""
    qs = questions(100)
    head = {**hits(qs), **{q["question"]: with_at({q["gold"][0]: 2}) for q in qs[:4]}}
    return _both_runs(tmp_path_factory.mktemp("four"), qs, hits(qs), head)


def test_four_moved_of_a_hundred_are_within_noise_and_the_gate_passes(four_moved):
    r = cli("compare", "base.json", "head.json", "--max-drop", "mrr=0.0", cwd=four_moved)
    assert r.returncode == 0, r.stdout + r.stderr
    mrr = next(line for line in r.stdout.splitlines() if line.startswith("| mrr "))
    # 4 moved, all one way: 2 of the 16 sign patterns are as extreme, p = 0.125
    assert "p=0.125" in mrr and "within noise" in mrr and "significant" not in mrr
    assert "### ✅ No question lost or gained its gold chunk at k=5; 4 questions moved" in r.stdout


@pytest.fixture(scope="module")
def at_zero(tmp_path_factory):
    """40 questions: 8 go rank 1 -> absent, 2 absent -> rank 1, 30 stay at rank 3."""
    qs = questions(40)
    base = {**hits(qs, 3), **{q["question"]: with_at({q["gold"][0]: 1}) for q in qs[:8]},
            **{q["question"]: filler(3 * K) for q in qs[8:10]}}
    head = {**hits(qs, 3), **{q["question"]: filler(3 * K) for q in qs[:8]},
            **{q["question"]: with_at({q["gold"][0]: 1}) for q in qs[8:10]}}
    return _both_runs(tmp_path_factory.mktemp("zero"), qs, base, head)


def test_precision_and_recall_agree_and_a_zero_allowance_does_not_fail_on_noise(at_zero):
    # --no-config: the flag alone (the default per-question rule would fail on the 8 lost)
    r = cli("compare", "base.json", "head.json", "--no-config", "--max-drop", "precision@5=0.0", cwd=at_zero)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {line.split("|")[1].strip(): line for line in r.stdout.splitlines()
            if line.startswith("| ") and "@" in line.split("|")[1]}
    # one share each (precision@5 is a fifth of hit@5 here): McNemar's score statistic of
    # 8 lost against 2 gained, (2 - 8) / sqrt(10), two-sided
    p = math.erfc(6 / math.sqrt(10) / math.sqrt(2))
    for name in ("precision@5", "recall@5", "hit@5"):
        assert f"p={p:.3f}" in rows[name] and "within noise" in rows[name]


def test_six_questions_that_all_lose_their_gold_chunk_print_intervals_inside_the_range(tmp_path):
    # the documented minimum of 6 questions, every one's gold chunk gone from the top 15:
    # hit@5 1.000 -> 0.000 is a change of -1, and no interval may reach past it
    qs = questions(6)
    root = _both_runs(tmp_path, qs, hits(qs), {q["question"]: filler(3 * K) for q in qs})
    r = cli("compare", "base.json", "head.json", "--json-out", "report.json", cwd=root)
    report = json.loads((root / "report.json").read_text())
    for m in report["metrics"]:
        low, high = m["test"]["ci"]
        assert -1.0 <= low <= high <= 1.0, m
    hit = next(line for line in r.stdout.splitlines() if line.startswith("| hit@5 "))
    assert "[-1.000, -0." in hit and "1.000  | 0.000" in hit, hit
