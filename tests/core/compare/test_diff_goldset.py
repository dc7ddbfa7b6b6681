"""The gold-set side of a comparison decided over columns, held to the same decisions made
one shared question at a time from the records."""

from __future__ import annotations

from factories import run, spec
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.artefact import column_views
from ci_eval.core.artefact.question_columns import ById, same_ids, sorted_by_id
from ci_eval.core.compare.diff_goldset import QuestionRef, partition, relabel_note


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


def _across(base_gold: dict, head_gold: dict, mappings: dict | None, from_version: str = "docs-1"):
    """The gold-set side of a comparison of one question whose gold base and head name
    differently, head's artefact recording ``mappings`` (old id -> (new ids, rule)) as its
    gold set's last remap (None: an artefact from before remaps were recorded)."""
    from factories import artefact

    from ci_eval.core.compare.diff import diff

    base = artefact([spec("q", base_gold, list(base_gold))], index_version="docs-1")
    head = artefact([spec("q", head_gold, list(head_gold))], index_version="docs-2")
    if mappings is not None:
        head["gold_set"]["remap"] = {
            "from_index_version": from_version, "to_index_version": "docs-2",
            "mappings": {old: {"new": list(new), "rule": rule} for old, (new, rule) in mappings.items()}}
    d = diff(base, head)
    return d.goldset, d.compared


def test_gold_changed_only_by_the_recorded_remap_is_compared_a_split_keeping_its_grade():
    goldset, compared = _across({"a": 2, "b": 1}, {"a1": 2, "a2": 2, "B": 1},
                                {"a": (("a1", "a2"), "automatic"), "b": (("B",), "accepted proposal")})
    assert compared == ("q",) and goldset.relabelled == ()
    r = goldset.rechunk
    assert (r.from_version, r.to_version, r.questions, r.proposals) == ("docs-1", "docs-2", 1, 1)


def test_a_regrade_besides_the_remap_stays_relabelled_and_says_what_the_person_changed():
    goldset, compared = _across({"a": 2}, {"A": 1}, {"a": (("A",), "automatic")})
    assert compared == () and goldset.rechunk is None
    assert [(r.id, r.note) for r in goldset.relabelled] == [("q", "1 gold regraded")]


def test_a_remap_from_another_index_or_none_recorded_leaves_the_question_relabelled():
    for mappings, from_version in (({"a": (("A",), "automatic")}, "docs-0"), (None, "docs-1")):
        goldset, compared = _across({"a": 1}, {"A": 1}, mappings, from_version)
        assert compared == () and goldset.rechunk is None
        assert [r.note for r in goldset.relabelled] == ["+1 gold, -1 gold"]
