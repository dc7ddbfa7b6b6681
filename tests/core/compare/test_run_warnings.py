"""The run's warnings read from the columns, held to the same groups made one question at
a time from the records."""

from __future__ import annotations

from factories import run, spec
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.compare.run_warnings import RunWarning, _label, run_warnings


def _one_at_a_time(questions, depth, no_comparison):
    groups: dict[str, set[str]] = {}
    for q in questions:
        for w in q.warnings:
            groups.setdefault(_label(w), set()).add(q.id)
        if q.status == "error":
            continue
        if q.returned == 0:
            groups.setdefault("no result at all", set()).add(q.id)
        elif depth is not None and q.returned < depth:
            groups.setdefault(f"fewer results than the depth ({depth}) asked for", set()).add(q.id)
        if q.stale:
            groups.setdefault("stale gold ids (missing from the index)", set()).add(q.id)
    out = [RunWarning(label, tuple(sorted(ids))) for label, ids in groups.items()]
    if no_comparison:
        out.append(RunWarning("no comparison possible (the verdict says why)", ()))
    return tuple(sorted(out, key=lambda w: (-len(w.ids), w.label)))


_QUESTION = st.fixed_dictionaries({
    "returned": st.integers(0, 4), "error": st.sampled_from([None, None, "timed out"]),
    "stale": st.booleans(),
    "warnings": st.lists(st.sampled_from(["duplicate id x dropped", "2 ids not in the index",
                                          "something else, then more"]), max_size=2)})


@settings(max_examples=80, deadline=None)
@given(questions=st.lists(_QUESTION, max_size=10), depth=st.sampled_from([None, 3]),
       no_comparison=st.sampled_from([None, "too few"]))
def test_the_warnings_read_from_the_columns_are_the_ones_read_question_by_question(
        questions, depth, no_comparison):
    head = run([spec(f"q{7 * n % 11}", ["g", "h"], ["g", "x", "y", "z"][:q["returned"]],
                     error=q["error"], stale=["h"] if q["stale"] else [], warnings=q["warnings"])
                for n, q in enumerate(questions)])
    info = head.header if depth is None else _with_depth(head.header, depth)
    assert (run_warnings(head.questions, info, no_comparison)
            == _one_at_a_time(head.questions, info.depth, no_comparison))


def _with_depth(header, depth: int):
    from dataclasses import replace

    return replace(header, depth=depth)
