"""The gate's cap on the failure matrix's "missed, wrong" cell (``max_missed_wrong``)."""

from __future__ import annotations

from factories import artefact, spec
from factories import ranked_with_gold_at as at

from ci_eval.core.compare.diff import diff
from ci_eval.core.compare.gate import GatePolicy, evaluate_gate


def _head(cells: list[tuple[int | None, bool | None]]):
    """One question per (rank of its gold chunk, answer correct) pair; k = 5."""
    return artefact([spec(f"q{i}", ["g"], at(rank, "g"), answer_correct=correct)
                     for i, (rank, correct) in enumerate(cells)])


def _outcome(cap: int, head):
    result = evaluate_gate(GatePolicy.from_mapping({"max_missed_wrong": cap}), diff(None, head))
    [outcome] = [o for o in result.outcomes if o.rule == "max_missed_wrong"]
    return outcome


def test_the_cap_counts_missed_and_wrong_only_and_names_them():
    # missed and wrong: q1 (rank 9 > k) and q3 (nothing retrieved); q2 missed but correct,
    # q0 retrieved and wrong, q4 without a verdict: none of them counts.
    head = _head([(1, False), (9, False), (9, True), (None, False), (None, None)])
    failed = _outcome(1, head)
    assert failed.status == "failed" and failed.question_ids == ("q1", "q3")
    assert (failed.value, failed.threshold) == (2.0, 1.0)
    assert "of 4 with a verdict" in failed.message
    assert _outcome(2, head).status == "passed"


def test_without_verdicts_the_cap_fails_closed():
    outcome = _outcome(5, _head([(1, None), (2, None)]))
    assert outcome.status == "failed" and "cannot be counted (fail closed" in outcome.message


def test_the_cap_is_a_non_negative_whole_number():
    import pytest

    from ci_eval.errors import InputErrors

    with pytest.raises(InputErrors, match="max_missed_wrong"):
        GatePolicy.from_mapping({"max_missed_wrong": -1})
