"""The diff's changes as columns agree with ``question_change``, one question at a time."""

from __future__ import annotations

import struct

import numpy as np
from factories import artefact, as_v2, default_metrics, spec
from factories import ranked_with_gold_at as at
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.artefact.artefact import read_artefact
from ci_eval.core.artefact.question_columns import ById
from ci_eval.core.compare.change_columns import rounded_as_python
from ci_eval.core.compare.diff import diff
from ci_eval.core.compare.diff_questions import question_change, severity

_RANK = st.one_of(st.none(), st.integers(1, 15))
_SIDE = st.fixed_dictionaries({"rank": _RANK, "error": st.booleans(), "grade": st.sampled_from([1, 2])})
_QUESTION = st.tuples(_SIDE, _SIDE, st.sampled_from([(), ("a",), ("a", "b")]))


def _side(questions, pick: int, k: int, dropped: str | None) -> dict:
    specs = []
    for n, (base, head, tags) in enumerate(questions):
        q = (base, head)[pick]
        specs.append(spec(f"q{n:02d}", {"g": q["grade"], "h": 1}, at(q["rank"]),
                          tags=list(tags), error="boom" if q["error"] else None))
    metrics = [m for m in default_metrics(k) if m != dropped]
    return artefact(specs, k=k, metrics=metrics)


def _reference(b: dict, h: dict, compared, k: int, on_both):
    bq, hq = ById(read_artefact(b).questions), ById(read_artefact(h).questions)
    return [question_change(bq[i], hq[i], k, on_both) for i in compared]


@settings(max_examples=60, deadline=None)
@given(questions=st.lists(_QUESTION, min_size=3, max_size=12),
       k=st.sampled_from([1, 2, 5]),
       dropped=st.tuples(st.sampled_from([None, "hit@k", "hit@3k"]), st.booleans()))
def test_kinds_summaries_and_orders_match_question_change(questions, k, dropped):
    name, on_base = dropped
    missing = {"hit@k": f"hit@{k}", "hit@3k": f"hit@{3 * k}"}.get(name)
    b = _side(questions, 0, k, missing if on_base else None)
    h = _side(questions, 1, k, None if on_base else missing)
    for pair in ((b, h), (as_v2(b), as_v2(h))):
        d = diff(*pair)
        on_both = tuple(m for m in d.head_info.metrics if m in d.base_info.metrics)
        want = _reference(*pair, d.compared, k, on_both)
        assert list(d.questions) == want
        regressions = sorted((q for q in want if q.regression), key=severity)
        assert list(d.regressions) == regressions and len(d.regressions) == len(regressions)
        assert list(d.improvements) == sorted((q for q in want if q.improvement), key=severity)
        assert list(d.unchanged.ids()) == [q.id for q in want if q.kind == "same"]
        assert d.lost == sum(1 for q in regressions if q.kind in ("lost", "error"))
        assert list(d.lost_changes.tags()) == [q.tags for q in regressions
                                               if q.kind in ("lost", "error")]
        for metric in on_both:
            assert list(d.fell_on(metric).ids()) == [q.id for q in regressions
                                                    if q.delta(metric) < 0]
        assert d.moved == sum(1 for q in want if q.kind != "same")


def test_a_change_is_built_only_when_read_and_reads_alike_each_time():
    specs = [spec(f"q{n}", ["g"], at(r)) for n, r in enumerate([1, 2, 7, None])]
    head = [spec(f"q{n}", ["g"], at(r)) for n, r in enumerate([7, 1, 7, 3])]
    d = diff(artefact(specs), artefact(head))
    built = d.questions.columns.change.cache_info
    assert len(d.questions) == 4 and d.lost == 1 and d.moved == 3 and built().currsize == 0
    assert d.questions[1] == d.questions[-3] and built().currsize == 1
    assert [q.kind for q in d.questions] == list(d.questions.kinds())
    assert d.questions[1:3] == tuple(d.questions)[1:3]
    assert [q.id for q in d.regressions] == ["q0"] and d.regressions[0].kind == "lost"


def test_changes_kept_for_a_second_full_listing_are_the_same_changes():
    specs = [spec(f"q{n}", ["g"], at(r)) for n, r in enumerate([1, 2, 7, None])]
    head = [spec(f"q{n}", ["g"], at(r)) for n, r in enumerate([7, 1, 7, 3])]
    fresh, kept = diff(artefact(specs), artefact(head)), diff(artefact(specs), artefact(head))
    kept.questions.columns.keep_listed()
    first, again = list(kept.questions), list(kept.questions)
    assert first == again == list(fresh.questions)
    assert all(a is b for a, b in zip(first, again))  # built once, listed twice
    assert not any(a is b for a, b in zip(list(fresh.questions), list(fresh.questions)))


# Doubles near a rounding tie at 9 digits (k + 1/2 billionths, and their neighbours), the
# edges (zero of both signs, the infinities, NaN, values too large to have 9 digits) and any.
_NEAR_TIES = st.builds(lambda k, nudge: float(np.nextafter((k + 0.5) / 1e9, nudge)),
                       st.integers(-10**7, 10**7), st.sampled_from([-np.inf, 0.0, np.inf]))
_DOUBLES = (_NEAR_TIES | st.floats(allow_nan=True, allow_infinity=True)
            | st.sampled_from([0.0, -0.0, 2.5e-9, 1.0000000005, 4.5e6, 9e15, 1e300]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_DOUBLES, max_size=20))
def test_rounding_in_numpy_gives_pythons_doubles(values):
    got = rounded_as_python(np.array(values, dtype=float), 9).tolist()
    want = [round(x, 9) for x in values]
    assert [struct.pack("<d", x) for x in got] == [struct.pack("<d", x) for x in want]
