"""The gold-set side of a comparison decided over columns, held to the same decisions made
one shared question at a time from the records."""

from __future__ import annotations

from factories import run, spec
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core import column_views
from ci_eval.core.diff_goldset import QuestionRef, partition, relabel_note
from ci_eval.core.question_columns import ById


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
_SIDE = st.fixed_dictionaries({
    "gold": _GOLD, "unanswerable": st.booleans(), "present": st.booleans(),
    "stale": st.lists(st.sampled_from("ab"), unique=True, max_size=1),
    "error": st.sampled_from([None, None, "timed out"])})


def _side(questions: list[dict]):
    return run([spec(f"q{n}", q["gold"], ["a", "x"], unanswerable=q["unanswerable"],
                     stale=[s for s in q["stale"] if s in q["gold"]], error=q["error"])
                for n, q in enumerate(questions) if q["present"]])


@settings(max_examples=80, deadline=None)
@given(pairs=st.lists(st.tuples(_SIDE, _SIDE), min_size=1, max_size=10))
def test_the_partition_over_columns_is_the_one_made_a_question_at_a_time(pairs):
    base, head = _side([b for b, _ in pairs]), _side([h for _, h in pairs])
    bq, hq = ById(base.questions), ById(head.questions)
    for block in (column_views.BLOCK, 2):  # in one block, and a few questions a block
        column_views.BLOCK, was = block, column_views.BLOCK
        try:
            changes, compared, (i, j) = partition(bq, hq, base.header, head.header)
        finally:
            column_views.BLOCK = was
        assert (changes.added, changes.removed, changes.relabelled, compared) == _one_at_a_time(bq, hq)
        assert changes.shared == len(bq.keys() & hq.keys())
        assert [base.columns.ids[p] for p in i] == [head.columns.ids[p] for p in j] == list(compared)
