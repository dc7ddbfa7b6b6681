"""The gold-set side of a comparison decided over columns, held to the same decisions made
one shared question at a time from the records."""

from __future__ import annotations

from factories import run, spec
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core import column_views
from ci_eval.core.diff_goldset import QuestionRef, partition, relabel_note
from ci_eval.core.question_columns import ById, same_ids, sorted_by_id


def _one_at_a_time(bq: ById, hq: ById):
    """Each shared question in id order: relabelled when its label differs in a way worth a
    note, else compared when measured on both sides with no stale gold."""
    relabelled, compared = [], []
    for qid in sorted(hq.keys() & bq.keys()):
        b, h = bq[qid], hq[qid]
        same = (b.unanswerable, b.gold, b.stale) == (h.unanswerable, h.gold, h.stale)
        note = None if same else relabel_note(b, h)
        if note:
            relabelled.append(QuestionRef(qid, h.question, note))
        elif not b.stale and not h.stale and b.measured and h.measured:
            compared.append(qid)
    added = [QuestionRef(q, hq[q].question) for q in sorted(hq.keys() - bq.keys())]
    removed = [QuestionRef(q, bq[q].question) for q in sorted(bq.keys() - hq.keys())]
    return tuple(added), tuple(removed), tuple(relabelled), tuple(compared)


_GOLD = st.dictionaries(st.sampled_from("abcd"), st.sampled_from([0, 1, 2]), max_size=3)
_FIELDS = {"gold": _GOLD, "unanswerable": st.booleans(),
           "stale": st.lists(st.sampled_from("ab"), unique=True, max_size=1),
           "error": st.sampled_from([None, None, "timed out"])}
_SIDE = st.fixed_dictionaries({**_FIELDS, "present": st.booleans()})
_PRESENT = st.fixed_dictionaries({**_FIELDS, "present": st.just(True)})
# the same gold ids on both sides, each grade kept or changed: the gold compared in place
_REGRADED = _PRESENT.flatmap(lambda b: st.tuples(st.just(b), st.fixed_dictionaries({
    **_FIELDS, "present": st.just(True), "unanswerable": st.just(b["unanswerable"]),
    "gold": st.fixed_dictionaries({g: st.sampled_from([0, 1, 2]) for g in b["gold"]})})))


def _side(questions: list[dict]):
    # ids not in reading order: id order and reading order differ
    return run([spec(f"q{7 * n % 11}", q["gold"], ["a", "x"], unanswerable=q["unanswerable"],
                     stale=[s for s in q["stale"] if s in q["gold"]], error=q["error"])
                for n, q in enumerate(questions) if q["present"]])


@settings(max_examples=80, deadline=None)
@given(pairs=st.lists(st.tuples(_SIDE, _SIDE), min_size=1, max_size=10)
       | st.lists(st.tuples(_PRESENT, _PRESENT), min_size=1, max_size=10)
       | st.lists(_REGRADED, min_size=1, max_size=10))
def test_the_partition_over_columns_is_the_one_made_a_question_at_a_time(pairs):
    """Also with both sides' ids the same in the same order (the second strategy), where
    head's id order aligns them, and the gold compared in place when the counts agree."""
    base, head = _side([b for b, _ in pairs]), _side([h for _, h in pairs])
    bq, hq = ById(base.questions), ById(head.questions)
    # diff gives head's id order only when both sides hold the same ids in the same order
    order = sorted_by_id(head.questions).order if same_ids(base.columns, head.columns) else None
    for block, known in ((column_views.BLOCK, None), (2, None), (column_views.BLOCK, order)):
        column_views.BLOCK, was = block, column_views.BLOCK  # one block, a few questions a block
        try:
            changes, compared, (i, j) = partition(bq, hq, base.header, head.header, known)
        finally:
            column_views.BLOCK = was
        assert (changes.added, changes.removed, changes.relabelled, compared) == _one_at_a_time(bq, hq)
        assert changes.shared == len(bq.keys() & hq.keys())
        assert [base.columns.ids[p] for p in i] == [head.columns.ids[p] for p in j] == list(compared)
