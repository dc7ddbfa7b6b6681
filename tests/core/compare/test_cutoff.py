"""The cutoff on the top score: gap, suggested cutoff, false "not found" and false answers."""

from __future__ import annotations

import math

from factories import artefact, spec
from factories import ranked_with_gold_at as at
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.artefact.artefact import read_artefact, read_header, read_questions
from ci_eval.core.artefact.question_columns import sorted_by_id
from ci_eval.core.compare.cutoff import NO_GAP, _bin_counts, analyse_cutoff, histogram, render_svg
from ci_eval.core.compare.cutoff import cutoff_side as _side_of


def cutoff_side(art):
    return _side_of(read_questions(art), read_header(art).abstain_below)


def _run(answerable_tops, unanswerable_tops, cutoff=5.0):
    qs = [spec(f"a{i}", ["g"], at(1), top=t) for i, t in enumerate(answerable_tops)]
    qs += [spec(f"u{i}", unanswerable=True, ranking=["x"] if t is not None else [],
                **({"top": t} if t is not None else {})) for i, t in enumerate(unanswerable_tops)]
    return artefact(qs, abstain_below=cutoff)


def test_gap_and_its_midpoint():
    side = cutoff_side(_run([8.0, 9.5, 12.0], [2.0, 4.0]))
    assert side.gap == (4.0, 8.0) and side.suggested == (4.0 + 8.0) / 2
    assert side.false_not_found == () and side.false_answers == ()


def test_no_gap_counts_the_overlap():
    side = cutoff_side(_run([3.0, 8.0, 9.0], [2.0, 8.5]))
    assert side.gap is None and not side.has_gap and side.suggested is None
    assert side.overlap == (2, 1)  # 3.0 and 8.0 <= 8.5; 8.5 >= 3.0


def test_configured_cutoff_errors_on_both_sides():
    side = cutoff_side(_run([3.0, 8.0], [6.0, 2.0, None], cutoff=5.0))
    assert side.false_not_found == ("a0",)  # 3.0 < 5.0: "I could not find this"
    assert side.false_answers == ("u0",)  # 6.0 >= 5.0: answered anyway
    # nothing returned abstains, which is right for an unanswerable question
    assert "u2" not in side.false_answers


def test_overlapping_scores_suggest_the_least_wrong_cutoff():
    side = cutoff_side(_run([3.0, 8.0, 9.0, 10.0], [2.0, 8.5]))
    # cutting between 8.5 and 9.0 answers 9.0 and 10.0: 3.0 and 8.0 are false "not found",
    # nothing unanswerable is answered (2); between 2.0 and 3.0 every answerable question
    # is answered and 8.5 is a false answer (1): the fewest mistakes
    assert side.least_wrong == ((2.0 + 3.0) / 2, 0, 1)
    assert side.errors_at((8.5 + 9.0) / 2) == (2, 0)


def test_a_gap_needs_no_least_wrong_cutoff():
    assert cutoff_side(_run([8.0, 9.5], [2.0])).least_wrong is None


def test_base_and_head_sides():
    base, head = _run([8.0], [2.0]), _run([8.0], [9.0])
    rep = analyse_cutoff(read_questions(base), 5.0, read_questions(head), 5.0)
    assert rep.base.has_gap and not rep.head.has_gap


def test_histogram_fits_a_code_block_and_marks_the_cutoff():
    text = histogram(cutoff_side(_run([8.0, 9.5, 12.0], [2.0, 4.0])))
    lines = text.splitlines()
    assert len(lines) == 11 and "```" not in text
    assert sum("◀ cutoff 5" in x for x in lines) == 1
    assert max(len(x) for x in lines) < 80


def test_svg_escapes_its_title_and_is_deterministic():
    side = cutoff_side(_run([3.0, 8.0], [8.5]))
    svg = render_svg(side, title="<b>&'\"")
    assert "<b>" not in svg and "&lt;b&gt;&amp;&#39;&quot;" in svg
    assert svg == render_svg(side, title="<b>&'\"")
    assert NO_GAP in svg


_TOPS = st.lists(st.sampled_from([0.5, 1.0, 2.25, 3.0, 4.5, 5.0, 7.75, 9.0]) | st.floats(-5, 20),
                 max_size=8)


@settings(max_examples=80, deadline=None)
@given(answerable=_TOPS, unanswerable=st.lists(st.none() | st.floats(-5, 20), min_size=1, max_size=6),
       cutoff=st.none() | st.floats(-5, 20))
def test_counts_read_from_sorted_scores_are_the_counts_of_every_score(answerable, unanswerable,
                                                                      cutoff):
    side = cutoff_side(_run(answerable, unanswerable, cutoff=cutoff))
    a, u = side.answerable_scores, side.unanswerable_scores
    lo, hi = side.highest_unanswerable, side.lowest_answerable
    if lo is not None and hi is not None and not lo < hi:
        assert side.overlap == (sum(1 for s in a if s <= lo), sum(1 for s in u if s >= hi))
    if side.checkable and not side.has_gap:
        scores = sorted(set(a + u))
        candidates = [(x + y) / 2 for x, y in zip(scores, scores[1:])] or scores
        best = min(candidates, key=lambda c: (sum(side.errors_at(c)), side.errors_at(c)[1], c))
        assert side.least_wrong == (best, *side.errors_at(best))
    else:
        assert side.least_wrong is None
    if a + u:  # each score's bin, one at a time as the histogram defines it
        lo, hi = min(a + u), max(a + u) + 1.0
        step = (hi - lo) / 10
        want = [0] * 10
        for x in a:
            want[min(int((x - lo) / step), 9)] += 1
        assert _bin_counts(a, lo, step, 10) == want


# "unanswerable error": the flag set on a question whose status says it failed
_KIND = st.sampled_from(["ok", "unanswerable", "error", "stale", "empty", "unanswerable error"])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), _KIND, st.sampled_from([0.0, -0.0, 1.5, 2.0])
                          | st.floats(-5, 20)), max_size=12, unique_by=lambda q: q[0]))
def test_each_side_read_from_the_columns_is_the_one_read_question_by_question(questions):
    specs = []
    for n, kind, top in questions:  # ids in no particular order: the side sorts them
        extra = {"error": "boom"} if "error" in kind else {"stale": ["g"]} if kind == "stale" else {}
        ranking = [] if kind == "empty" or "error" in kind else ["x", "g"]
        specs.append(spec(f"q{n}", None if "unanswerable" in kind else ["g"], ranking,
                          unanswerable="unanswerable" in kind, top=top, **extra))
    data = artefact(specs, abstain_below=1.0)
    columns = read_artefact(data).questions
    records = tuple(columns)
    want = _side_of(records, 1.0)
    for side in (_side_of(columns, 1.0), _side_of(sorted_by_id(columns), 1.0)):
        assert side == want
        for got, expected in ((side.answerable_scores, want.answerable_scores),
                              (side.unanswerable_scores, want.unanswerable_scores)):
            assert [(x, math.copysign(1, x)) for x in got] == [(x, math.copysign(1, x)) for x in expected]


def _ranked_run(unanswerable_count: int = 2, depth: int = 3):
    """What a retriever without scores records: each question's results scored by
    rank_scores (depth for the first, 1 for the last)."""
    from ci_eval.core.artefact.results import rank_scores

    scores = rank_scores(depth)
    ranking = [f"c{i}" for i in range(depth)]
    qs = [spec(f"a{i}", ["c0"], ranking, scores=scores) for i in range(3)]
    qs += [spec(f"u{i}", unanswerable=True, ranking=ranking, scores=scores)
           for i in range(unanswerable_count)]
    return artefact(qs, abstain_below=2.5)


def test_rank_scores_are_known_and_suggest_no_cutoff():
    art = _ranked_run()
    for side in (cutoff_side(art), _side_of(read_artefact(art).questions, 2.5)):
        assert side.ranks
        # over ranks every question ties at the depth: this would be "no gap", least wrong 3
        assert not side.checkable and side.gap is None and not side.has_gap
        assert side.suggested is None and side.least_wrong is None


def test_real_scores_are_not_ranks():
    art = _run([8.0, 9.5], [2.0])
    assert not cutoff_side(art).ranks
    # one question whose top score happens to equal its count of results is not enough
    mixed = artefact([spec("a0", ["g"], at(1), top=1.0), spec("a1", ["g"], at(1), top=0.9),
                      spec("u0", unanswerable=True, ranking=["x"], top=0.2)], abstain_below=0.5)
    assert not cutoff_side(mixed).ranks


def test_the_svg_of_ranks_plots_no_point_and_no_suggestion():
    svg = render_svg(cutoff_side(_ranked_run()))
    assert "<circle" not in svg and "suggested cutoff" not in svg
    assert "The scores are ranks." in svg
