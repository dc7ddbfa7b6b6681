"""A plain answer of (id, score) tuples keeps the retriever's own tuples as the ranking's
pairs; any other shape gives none, and the row written is the same either way."""

from __future__ import annotations

from ci_eval.core.artefact_writer import compact
from ci_eval.core.evaluation import evaluate_rows
from ci_eval.core.goldset import GoldSet, Question
from ci_eval.core.results import clean

ANSWER = [("b", 0.9), ("a", 0.5), ("c", 0.25)]


def test_a_plain_answer_of_tuples_is_kept_as_its_own_pairs_cut_to_depth():
    cleaned = clean(ANSWER, 2)
    assert cleaned.pairs == (("b", 0.9), ("a", 0.5))
    assert cleaned.pairs[0] is ANSWER[0]
    assert (cleaned.ids, cleaned.scores) == (("b", "a"), (0.9, 0.5))


def test_lists_unordered_or_duplicated_answers_have_no_pairs():
    assert clean([list(pair) for pair in ANSWER], 2).pairs is None
    assert clean(ANSWER[::-1], 3).pairs is None  # ordered by clean, not as given
    assert clean([*ANSWER, ("b", 0.1)], 5).pairs is None
    assert clean(ANSWER, 2) == clean([list(pair) for pair in ANSWER], 2)


def test_the_row_is_written_the_same_from_tuples_or_lists():
    gold = GoldSet(1, None, (Question("q1", "which?", (("a", 1),)),))

    def row(answer):
        (written,) = evaluate_rows(gold, [("q1", clean(answer, 3, 2.0))], k=2, metrics=("mrr", "recall@2"))
        return compact(written)

    assert row(ANSWER) == row([list(pair) for pair in ANSWER])
    assert '[["b",0.9],["a",0.5],["c",0.25]]' in row(ANSWER)
