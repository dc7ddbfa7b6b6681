"""A plain answer of (id, score) tuples keeps the retriever's own tuples as the ranking's
pairs; any other shape gives none, and the row written is the same either way."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.artefact.artefact_writer import compact
from ci_eval.core.artefact.evaluation import evaluate_rows
from ci_eval.core.artefact.results import clean, clean_batch
from ci_eval.core.gold.goldset import GoldSet, Question

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


ids = st.sampled_from(["a", "b", "c", "d", "\u00e9", "e"])
scores = st.one_of(st.sampled_from([0.9, 0.5, 0.25, 0.1]), st.floats(allow_nan=True, allow_infinity=True))
pair = st.one_of(st.tuples(ids, scores), st.lists(ids, min_size=2, max_size=2).map(lambda p: (p[0], 0.5)),
                 st.tuples(ids, scores).map(list))
answer = st.one_of(st.lists(pair, max_size=6), st.lists(st.tuples(ids, scores), min_size=1, max_size=6, unique_by=lambda p: p[0])
                   .map(lambda a: sorted(a, key=lambda p: -p[1] if p[1] == p[1] else 0)))


@settings(max_examples=300, deadline=None)
@given(st.lists(answer, max_size=5), st.integers(0, 7), st.sampled_from([None, frozenset("abc"), {"a", "e"}]))
def test_a_batch_is_cleaned_as_each_answer_alone_or_not_at_all(answers, depth, known):
    latencies = [float(i) for i in range(len(answers))]
    batch = clean_batch(answers, depth, latencies, known)
    if batch is None:
        return
    alone = [clean(raw, depth, latency, known) for raw, latency in zip(answers, latencies)]
    assert batch == alone
    assert [r.pairs for r in batch] == [r.pairs for r in alone]
    assert all(p is q for r, raw in zip(batch, answers) for p, q in zip(r.pairs, raw))


def test_a_batch_of_plain_answers_is_cleaned_at_once_and_any_other_is_not():
    answers = [ANSWER, [("c", 2.0), ("a", 1.0)], [("a", 0.5)]]
    batch = clean_batch(answers, 2, [1.0, 2.0, 3.0], frozenset("ab"))
    assert batch == [clean(raw, 2, latency, frozenset("ab")) for raw, latency in zip(answers, [1.0, 2.0, 3.0])]
    assert batch[1].warnings == ("1 id(s) not in the index, e.g. 'c'",)
    # the second answer's first score above the first answer's last is not a disorder
    assert clean_batch([ANSWER, [("d", 0.3)]], 5, [1.0, 2.0]) is not None
    for odd in ([("a", 0.5), ("b", 0.5)], [("a", 0.5), ("a", 0.4)], [["a", 0.5]], [], [("a", float("nan"))],
                [("\ud800", 0.5)], (("a", 0.5),)):
        assert clean_batch([ANSWER, odd], 5, [1.0, 2.0]) is None
