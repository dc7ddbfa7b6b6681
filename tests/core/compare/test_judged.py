from contextlib import contextmanager

import pytest
from factories import artefact, as_v2, run, spec
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.artefact import column_views
from ci_eval.core.artefact.artefact import read_artefact
from ci_eval.core.compare.judged import judged_at_k, judged_report, mean_judged, unjudged_in_top_k


def test_share_of_the_top_k_that_carries_any_judgement():
    ranking = ["a", "b", "c", "d", "e", "f"]
    judged = {"a", "c", "f"}  # f is judged but outside the top 5
    assert judged_at_k(ranking, judged, 5) == 2 / 5
    assert unjudged_in_top_k(ranking, judged, 5) == ("b", "d", "e")


def test_a_short_ranking_divides_by_what_came_back():
    assert judged_at_k(["a", "b"], {"a", "b"}, 5) == 2 / 2
    assert judged_at_k([], {"a"}, 5) is None


def test_mean_skips_questions_without_results():
    assert mean_judged([1.0, None, 0.5]) == (1.0 + 0.5) / 2
    assert mean_judged([None]) is None


def _art(rankings: dict, gold: dict, k: int = 3, unanswerable=()):
    specs = [spec(qid, gold.get(qid, {}), ids) for qid, ids in rankings.items()]
    return run(specs + [spec(u, unanswerable=True, ranking=ids) for u, ids in unanswerable], k=k)


def test_the_report_counts_only_unjudged_results_the_head_brought_in():
    gold = {"q1": {"a": 1, "b": 0}, "q2": {"g": 1}}
    base = _art({"q1": ["a", "b", "c"], "q2": ["g", "x", "y"]}, gold)
    # q1: d is new and unjudged, c was already in the base's top 3; q2: z and w are new and
    # unjudged, g fell out of the top 3 (a regression whose new results are all unjudged).
    head = _art({"q1": ["a", "d", "c"], "q2": ["x", "z", "w", "g"]}, gold)
    report = judged_report(base, head, ["q2"])
    assert (report.new_unjudged, report.questions) == (1 + 2, 2)
    assert report.suspects == {"q2"}
    assert report.head_mean == (1 / 3 + 0 / 3) / 2
    assert report.base_mean == (2 / 3 + 1 / 3) / 2


def test_the_same_from_version_2_rows():
    gold = {"q1": {"a": 1, "b": 0}, "q2": {"g": 1}}
    base = read_artefact(as_v2(artefact([spec("q1", gold["q1"], ["a", "b", "c"]),
                                         spec("q2", gold["q2"], ["g", "x", "y"])], k=3)))
    head = read_artefact(as_v2(artefact([spec("q1", gold["q1"], ["a", "d", "c"]),
                                         spec("q2", gold["q2"], ["x", "z", "w", "g"])], k=3)))
    report = judged_report(base, head, ["q2"])
    assert (report.new_unjudged, report.questions, report.suspects) == (1 + 2, 2, {"q2"})


def test_a_regression_that_brought_a_judged_chunk_is_not_suspect():
    gold = {"q1": {"a": 1, "n": 0}}
    base = _art({"q1": ["a", "b", "c"]}, gold)
    head = _art({"q1": ["n", "b", "c", "a"]}, gold)  # n was judged not relevant
    report = judged_report(base, head, ["q1"])
    assert report.suspects == frozenset() and report.new_unjudged == 0


def test_without_a_base_every_unjudged_top_k_result_counts_and_unmeasured_questions_do_not():
    head = _art({"q1": ["a", "b"]}, {"q1": {"a": 1}}, unanswerable=[("u1", ["z"])])
    report = judged_report(None, head, [])
    assert (report.new_unjudged, report.questions, report.compared) == (1, 1, False)
    assert report.head_mean == 1 / 2 and report.base_mean is None


def test_a_base_with_a_smaller_k_is_read_deep_enough_for_the_heads():
    base = artefact([spec("q1", ["a"], ["a", "b", "c", "d"])], k=2)
    head = run([spec("q1", ["a"], ["a", "b", "c", "e"])], k=4)
    # the head's top 4 against the base's top 4, not its top 2: only e is new
    assert judged_report(read_artefact(base, top=4), head, []).new_unjudged == 1
    with pytest.raises(ValueError, match="top=4"):
        judged_report(read_artefact(base), head, [])


def _one_at_a_time(base, head, regressions):
    """judged@k worked out question by question from the records (what the columns must match)."""
    k = head.header.k
    on_base = {q.id: q for q in base.questions} if base is not None else {}

    def mean(artefact):
        return mean_judged(judged_at_k(q.top[:k], {c for c, _ in q.gold}, k)
                           for q in artefact.questions if q.measured)

    new_unjudged, questions, suspects = 0, 0, set()
    for q in head.questions:
        if not q.measured:
            continue
        before = on_base[q.id].top[:k] if q.id in on_base else ()
        new = [c for c in q.top[:k] if c not in before]
        unjudged = unjudged_in_top_k(new, {c for c, _ in q.gold}, k)
        new_unjudged, questions = new_unjudged + len(unjudged), questions + bool(unjudged)
        if q.id in regressions and new and len(unjudged) == len(new):
            suspects.add(q.id)
    return (mean(head), mean(base) if base is not None else None, new_unjudged, questions,
            suspects)


_IDS = st.sampled_from("abcdefgh")
_SIDE = st.tuples(st.lists(_IDS, unique=True, max_size=4), st.lists(_IDS, unique=True, max_size=6),
                  st.booleans(), st.booleans())  # gold, ranking, unanswerable, on this side


@settings(max_examples=60, deadline=None)
@given(sides=st.lists(st.tuples(_SIDE, _SIDE), min_size=1, max_size=8), k=st.integers(1, 4),
       wanted=st.sets(st.integers(0, 7)))
def test_the_columns_give_what_each_question_gives_one_at_a_time(sides, k, wanted):
    def side(which):
        specs = [spec(f"q{n}", gold, ranking, unanswerable=unans)
                 for n, pair in enumerate(sides) for gold, ranking, unans, present in [pair[which]]
                 if present or which == 1]
        return run(specs, k=k)

    base, head = side(0), side(1)
    regressions = [f"q{n}" for n in wanted]
    want = _one_at_a_time(base if len(base.columns) else None, head, set(regressions))
    # in one block, a few questions a block, and with each block's own id codes
    for block, coded in ((column_views.BLOCK, column_views.CODED_AT_MOST), (2, column_views.CODED_AT_MOST),
                         (2, 0)):
        with _blocks_of(block, coded):
            report = judged_report(base if len(base.columns) else None, head, regressions)
        assert (report.head_mean, report.base_mean, report.new_unjudged, report.questions,
                set(report.suspects)) == want


@contextmanager
def _blocks_of(n: int, coded: int = column_views.CODED_AT_MOST):
    was = column_views.BLOCK, column_views.CODED_AT_MOST
    column_views.BLOCK, column_views.CODED_AT_MOST = n, coded
    try:
        yield
    finally:
        column_views.BLOCK, column_views.CODED_AT_MOST = was
