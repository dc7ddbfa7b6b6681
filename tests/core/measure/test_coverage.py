"""The evidence metrics against a direct count of characters, made here one character at a
time with sets (no intervals), on random overlapping evidence and chunks."""

from __future__ import annotations

import numpy as np
import pytest

from ci_eval.core.measure.coverage import EvidenceTable, graded_segments, union
from ci_eval.core.measure.metrics import build_table, compute_table


def _chars(spans) -> set:
    return {(doc, c) for doc, start, end in spans for c in range(start, end)}


def _grade_of(evidence, level) -> dict:
    """Each evidence character's grade: the highest of the evidence holding it."""
    out: dict = {}
    for doc, start, end, grade in evidence:
        if grade >= level and grade > 0:
            for c in range(start, end):
                out[(doc, c)] = max(out.get((doc, c), grade), grade)
    return out


def direct_recall(evidence, ranked, k, level) -> float:
    grade = _grade_of(evidence, level)
    covered = _chars(s for s in ranked[:k] if s is not None)
    whole = sum(grade.values())
    return sum(g for c, g in grade.items() if c in covered) / whole if whole else 0.0


def direct_precision(evidence, ranked, k, level) -> float:
    grade = _grade_of(evidence, level)
    covered = _chars(s for s in ranked[:k] if s is not None)
    return len(covered & grade.keys()) / len(covered) if covered else 0.0


def _case(rng):
    docs = ["a.md", "b.md"]
    evidence = [(str(rng.choice(docs)), int(s), int(s + rng.integers(1, 80)), int(rng.choice([-1, 0, 1, 2, 3])))
                for s in rng.integers(0, 300, size=int(rng.integers(0, 5)))]
    ranked = [None if rng.random() < 0.1 else (str(rng.choice(docs)), int(s), int(s + rng.integers(1, 120)))
              for s in rng.integers(0, 300, size=int(rng.integers(0, 12)))]
    return evidence, ranked


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", [1, 2])
def test_evidence_metrics_equal_a_direct_character_count(seed, level):
    rng = np.random.default_rng(seed)
    cases = [_case(rng) for _ in range(30)]
    table = build_table([[f"c{i}" for i in range(len(r))] for _, r in cases], [{} for _ in cases], level)
    table.evidence = EvidenceTable([e for e, _ in cases], [r for _, r in cases])
    names = ["evidence_recall@1", "evidence_recall@5", "evidence_recall@20", "evidence_precision@3",
             "evidence_precision@10"]
    got = compute_table(names, table)
    for q, (evidence, ranked) in enumerate(cases):
        for k in (1, 5, 20):
            assert got[f"evidence_recall@{k}"][q] == pytest.approx(direct_recall(evidence, ranked, k, level))
        for k in (3, 10):
            assert got[f"evidence_precision@{k}"][q] == pytest.approx(direct_precision(evidence, ranked, k, level))


def test_overlapping_chunks_cover_a_character_once_and_overlapping_evidence_counts_its_highest_grade():
    evidence = [("d", 0, 10, 1), ("d", 5, 15, 3)]  # characters 5..9 are graded 3, not 1 + 3
    ranked = [("d", 0, 8), ("d", 4, 8), ("d", 20, 30)]
    table = build_table([["x", "y", "z"]], [{}])
    table.evidence = EvidenceTable([evidence], [ranked])
    got = compute_table(["evidence_recall@2", "evidence_precision@2", "evidence_precision@3"], table)
    whole = 5 * 1 + 10 * 3  # 0..4 at grade 1, 5..14 at grade 3
    assert got["evidence_recall@2"][0] == pytest.approx((5 * 1 + 3 * 3) / whole)  # 0..7 covered, once
    assert got["evidence_precision@2"][0] == 1.0  # 0..7: every character evidence
    assert got["evidence_precision@3"][0] == pytest.approx(8 / (8 + 10))


def test_pieces_and_unions_are_disjoint_and_sorted():
    assert graded_segments([("d", 0, 10, 1), ("d", 5, 15, 3), ("d", 15, 20, 3), ("e", 3, 3, 1)]) == {
        "d": [(0, 5, 1), (5, 20, 3)]}
    assert union([("d", 8, 12), ("d", 0, 5), ("d", 5, 7), ("d", 20, 21)]) == {"d": [(0, 7), (8, 12), (20, 21)]}


def test_an_evidence_metric_without_span_gold_is_a_one_line_input_error():
    from ci_eval.errors import InputError

    with pytest.raises(InputError, match="needs span gold"):
        compute_table(["evidence_recall@5"], build_table([["a"]], [{"a": 1}]))
