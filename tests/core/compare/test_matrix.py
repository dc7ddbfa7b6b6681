"""The failure matrix: retrieved at k x answered correctly, and moves between its cells."""

from __future__ import annotations

from factories import artefact, spec
from factories import ranked_with_gold_at as at

from ci_eval.core.artefact.artefact import read_questions
from ci_eval.core.compare.diff import diff
from ci_eval.core.compare.matrix import ANSWERS_HINT, failure_matrix


def _run(rows):
    return artefact([spec(q, ["g"], at(r), answer_correct=c) for q, r, c in rows])


def _head_only(rows):
    return failure_matrix(None, read_questions(_run(rows)), 5, ())


def test_without_answers_the_matrix_says_how_to_get_them():
    mx = _head_only([("a", 1, None)])
    assert not mx.available and mx.hint == ANSWERS_HINT
    assert '[answers]' in ANSWERS_HINT and 'type = \"promptfoo\"' in ANSWERS_HINT


def test_cells_and_transitions():
    base = _run([("ret", 1, True), ("gen", 2, True), ("own", 9, False), ("fix", 7, False),
                 ("same", 1, True)])
    head = _run([("ret", 9, False), ("gen", 2, False), ("own", 9, True), ("fix", 3, True),
                 ("same", 1, True)])
    mx = diff(base, head).matrix
    assert dict(mx.base.counts) == {"retrieved_correct": 3, "retrieved_wrong": 0,
                                    "missed_wrong": 2, "missed_correct": 0}
    assert dict(mx.head.counts) == {"retrieved_correct": 2, "retrieved_wrong": 1,
                                    "missed_wrong": 1, "missed_correct": 1}
    kinds = {t.id: t.kind for t in mx.transitions}
    assert kinds == {"ret": "retrieval_regression", "gen": "generation_regression",
                     "own": "other", "fix": "retrieval_fix"}
    assert mx.own_knowledge == ("own",)


def test_unknown_verdicts_are_counted_not_guessed():
    mx = _head_only([("a", 1, True), ("b", 1, None)])
    assert mx.head.known == 1 and mx.head.unknown == 1


def test_largest_failure_cell():
    mx = _head_only([("a", 9, False), ("b", 9, False), ("c", 1, False)])
    assert mx.head.largest == ("missed_wrong",)


def test_a_tie_for_the_largest_cell_names_every_tied_cell():
    mx = _head_only([("a", 9, False), ("b", 1, False), ("c", 1, True)])
    assert mx.head.largest == ("retrieved_wrong", "missed_wrong")


def test_no_failure_no_largest_cell():
    assert _head_only([("a", 1, True)]).head.largest == ()
