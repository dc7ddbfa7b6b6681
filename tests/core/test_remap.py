"""The remap rules on small hand-made chunkings, and the rewritten gold set."""

from __future__ import annotations

import copy

import pytest

from ci_eval.core.anchors import Anchor, anchor_for
from ci_eval.core.fingerprint import signature, text_hash
from ci_eval.core.goldset import parse_gold_set
from ci_eval.core.manifest import Chunk, ChunkIndex
from ci_eval.core.remap import AUTOMATIC, PROPOSED, UNRESOLVED, apply_plan, plan_remap


def words(start: int, n: int, tag: str = "w") -> str:
    return " ".join(f"{tag}{i}" for i in range(start, start + n))


def index(*chunks: Chunk, version: str = "v2") -> ChunkIndex:
    return ChunkIndex(version, {c.id: c for c in chunks}, "new.json")


def gold_doc(*golds, anchors: dict | None = None) -> dict:
    doc = {"schema_version": 1, "index_version": "v1",
           "questions": [{"id": f"q{i}", "question": f"question {i}?", "gold": g}
                         for i, g in enumerate(golds, 1)]}
    if anchors is not None:
        doc["schema_version"] = 2
        doc["anchors"] = {cid: a.as_json() for cid, a in anchors.items()}
    return doc


def plan_for(doc: dict, new: ChunkIndex, **kw):
    gold = parse_gold_set(doc, "gold.json")
    return plan_remap(gold, gold.anchors, new, **kw)


def only(plan):
    (m,) = plan.mappings
    return m.kind, m.new, m.how, m.confidence


def span_chunk(cid, doc, start, end, text=None):
    return Chunk(cid, doc, start, end, text_hash(text) if text else None, text)


def test_moved_chunk_is_found_by_its_hash():
    old = Anchor("d", 100, 200, text_hash("the old text"))
    new = index(Chunk("x-7", "d", 0, 12, text_hash("the old text")))
    assert only(plan_for(gold_doc(["d#1"], anchors={"d#1": old}), new)) == (AUTOMATIC, ("x-7",), "hash", 1.0)


def test_split_chunk_maps_to_both_halves_with_the_grade():
    old = Anchor("d", 100, 200, text_hash("before"))
    new = index(span_chunk("d:100", "d", 100, 150, "first half"), span_chunk("d:150", "d", 150, 200, "second half"),
                span_chunk("d:200", "d", 200, 300, "next"))
    doc = gold_doc({"d#1": 2}, anchors={"d#1": old})
    plan = plan_for(doc, new)
    # Both halves lie wholly inside the old span and together cover 100 of its 100 characters.
    assert only(plan) == (AUTOMATIC, ("d:100", "d:150"), "span", 100 / 100)
    out = apply_plan(doc, plan, new, accept_proposals=False, record={"by": "t", "at": "now"})
    assert out["questions"][0]["gold"] == {"d:100": 2, "d:150": 2}


def test_merged_chunks_keep_the_highest_grade():
    a, b = Anchor("d", 200, 300, text_hash("a")), Anchor("d", 300, 400, text_hash("b"))
    new = index(span_chunk("d:200", "d", 200, 400, "a b"))
    doc = gold_doc({"d#2": 1, "d#3": 3}, anchors={"d#2": a, "d#3": b})
    plan = plan_for(doc, new)
    # Each old span is wholly inside the merged chunk: it holds 100 of each one's 100.
    assert [(m.old, m.new, m.kind, m.confidence) for m in plan.mappings] == [
        ("d#2", ("d:200",), AUTOMATIC, 1.0), ("d#3", ("d:200",), AUTOMATIC, 1.0)]
    out = apply_plan(doc, plan, new, accept_proposals=False, record={})
    assert out["questions"][0]["gold"] == {"d:200": max(1, 3)}


def test_shifted_boundary_takes_the_chunk_holding_most_of_the_span():
    old = Anchor("d", 100, 200)
    new = index(span_chunk("d:80", "d", 80, 180), span_chunk("d:180", "d", 180, 280))
    # d:80 holds 80 of the old 100 characters (>= half of the old span); d:180 holds 20,
    # less than half of the old span and less than half of its own 100.
    assert only(plan_for(gold_doc(["d#1"], anchors={"d#1": old}), new)) == (AUTOMATIC, ("d:80",), "span", 80 / 100)


def test_too_little_overlap_is_not_a_span_match():
    old = Anchor("d", 0, 100)
    new = index(span_chunk("d:90", "d", 90, 300))
    # 10 characters shared: under half of the old 100 and under half of the new 210.
    assert only(plan_for(gold_doc(["d#0"], anchors={"d#0": old}), new)) == (UNRESOLVED, (), "no match", 0.0)


def test_edited_chunk_without_spans_is_proposed_with_its_score():
    before = words(0, 30)
    after = " ".join(before.split()[:15] + ["edited"] + before.split()[16:])
    old = Anchor("d", None, None, text_hash(before), signature(before))
    new = index(Chunk("n1", "d", None, None, text_hash(after), after),
                Chunk("n2", "d", None, None, text_hash(words(100, 30)), words(100, 30)))
    kind, ids, how, score = only(plan_for(gold_doc(["d#1"], anchors={"d#1": old}), new))
    # 28 shingles on each side, the 3 holding word 15 differ: Jaccard 25 / 31.
    assert (kind, ids, how) == (PROPOSED, ("n1",), "similar")
    assert abs(score - 25 / 31) < 0.2


def test_edited_chunk_keeps_its_span_match():
    old = Anchor("d", 0, 100, text_hash("old words"), signature("old words here"))
    new = index(span_chunk("d:0", "d", 0, 104, "old words, edited"))
    assert only(plan_for(gold_doc(["d#0"], anchors={"d#0": old}), new)) == (AUTOMATIC, ("d:0",), "span", 1.0)


def test_deleted_document_is_unresolved():
    old = Anchor("gone", 0, 100, text_hash(words(0, 20)), signature(words(0, 20)))
    new = index(span_chunk("e:0", "e", 0, 100, words(500, 20)))
    assert only(plan_for(gold_doc(["gone#0"], anchors={"gone#0": old}), new)) == (UNRESOLVED, (), "document gone", 0.0)


def test_document_renamed_is_found_across_the_index():
    text = words(0, 40)
    edited = text.replace("w39", "changed")
    old = Anchor("old-name", 0, 100, text_hash(text), signature(text))
    new = index(*(span_chunk(f"e:{i}", f"e{i}", 0, 10, words(1000 + 50 * i, 40)) for i in range(50)),
                span_chunk("new-name:0", "new-name", 0, 100, edited))
    kind, ids, how, score = only(plan_for(gold_doc(["x"], anchors={"x": old}), new))
    # 38 shingles each side, the last one differs: Jaccard 37 / 39.
    assert (kind, ids, how) == (PROPOSED, ("new-name:0",), "similar")
    assert abs(score - 37 / 39) < 0.2


def test_below_the_threshold_nothing_is_proposed():
    before, after = words(0, 30), words(0, 15) + " " + words(50, 15)
    old = Anchor("d", None, None, None, signature(before))
    new = index(Chunk("n", "d", None, None, text_hash(after), after))
    plan = plan_for(gold_doc(["d#1"], anchors={"d#1": old}), new, threshold=0.9)
    # 13 shingles shared of 28 + 28 - 13 = 43: Jaccard 0.30, well under 0.9.
    assert only(plan)[0] == UNRESOLVED


def test_duplicated_text_is_only_proposed():
    old = Anchor(None, None, None, text_hash("boilerplate"))
    new = index(Chunk("a", "d1", None, None, text_hash("boilerplate")), Chunk("b", "d2", None, None, text_hash("boilerplate")))
    assert only(plan_for(gold_doc(["old"], anchors={"old": old}), new)) == (PROPOSED, ("a", "b"), "hash", 1 / 2)


def test_duplicated_text_in_the_same_document_wins():
    old = Anchor("d2", None, None, text_hash("boilerplate"))
    new = index(Chunk("a", "d1", None, None, text_hash("boilerplate")), Chunk("b", "d2", None, None, text_hash("boilerplate")))
    assert only(plan_for(gold_doc(["old"], anchors={"old": old}), new)) == (AUTOMATIC, ("b",), "hash", 1.0)


def test_gold_set_without_anchors_leaves_every_stale_id_unresolved():
    new = index(Chunk("a"), Chunk("b"))
    plan = plan_for(gold_doc(["a", "old1"], {"old2": 1, "b": 2}), new)
    assert [(m.old, m.kind, m.how) for m in plan.mappings] == [("old1", UNRESOLVED, "no anchor"),
                                                              ("old2", UNRESOLVED, "no anchor")]
    assert (plan.count(AUTOMATIC), plan.count(UNRESOLVED)) == (0, 2)


def test_ids_still_in_the_index_are_not_remapped():
    chunk = Chunk("a", "d", 0, 10, text_hash("x"), "x")
    plan = plan_for(gold_doc(["a"], anchors={"a": anchor_for(chunk)}), index(chunk))
    assert plan.mappings == ()


def test_apply_rewrites_ids_anchors_version_and_provenance():
    moved_text, split = "moved text", Anchor("d", 0, 100)
    new = index(Chunk("m2", "e", 0, 10, text_hash(moved_text), moved_text),
                span_chunk("d:0", "d", 0, 50, "left"), span_chunk("d:50", "d", 50, 100, "right"),
                Chunk("kept"))
    doc = gold_doc(["m1", "kept"], ["d#0", "lost"], anchors={"m1": Anchor(hash=text_hash(moved_text)), "d#0": split,
                                                            "lost": Anchor("nowhere", 0, 5)})
    before = copy.deepcopy(doc)
    plan = plan_for(doc, new)
    out = apply_plan(doc, plan, new, accept_proposals=False, record={"by": "ana", "at": "2026-01-01T00:00:00Z"})
    assert doc == before
    assert [q["gold"] for q in out["questions"]] == [["m2", "kept"], ["d:0", "d:50", "lost"]]
    assert set(out["anchors"]) == {"m2", "d:0", "d:50", "lost"}
    assert out["anchors"]["m2"] == {"doc": "e", "start": 0, "end": 10, "hash": text_hash(moved_text),
                                    "signature": signature(moved_text)}
    assert out["index_version"] == "v2" and out["schema_version"] == 2
    assert out["provenance"]["remaps"] == [{
        "by": "ana", "at": "2026-01-01T00:00:00Z", "from_index_version": "v1", "to_index_version": "v2",
        "automatic": 2, "proposals_accepted": 0, "proposals_left": 0, "unresolved": 1,
        "mappings": {"m1": {"new": ["m2"], "rule": "automatic"},
                     "d#0": {"new": ["d:0", "d:50"], "rule": "automatic"}}}]
    parse_gold_set(out, "out.json")  # still a valid gold set


@pytest.mark.parametrize("accept", [False, True])
def test_proposals_apply_only_when_accepted(accept):
    old = Anchor(None, None, None, None, signature(words(0, 30)))
    new = index(Chunk("n", None, None, None, text_hash(words(0, 29)), words(0, 29)))
    doc = gold_doc(["o"], anchors={"o": old})
    plan = plan_for(doc, new)
    out = apply_plan(doc, plan, new, accept_proposals=accept, record={})
    assert out["questions"][0]["gold"] == (["n"] if accept else ["o"])
    assert out["provenance"]["remaps"][0]["proposals_accepted"] == (1 if accept else 0)
    # the record names only what the rewrite applied: a proposal left is not a mapping
    assert out["provenance"]["remaps"][0]["mappings"] == (
        {"o": {"new": ["n"], "rule": "accepted proposal"}} if accept else {})


def test_a_copy_in_another_document_yields_to_the_split_in_its_own():
    text = "a section some other page repeats"
    old = Anchor("compound", 0, 100, text_hash(text))
    new = index(Chunk("with#same", "with", 0, 33, text_hash(text), text),
                span_chunk("compound#s/1", "compound", 0, 50, "first half"),
                span_chunk("compound#s/2", "compound", 50, 100, "second half"))
    assert only(plan_for(gold_doc(["compound#s"], anchors={"compound#s": old}), new)) == (
        AUTOMATIC, ("compound#s/1", "compound#s/2"), "span", 1.0)


def test_a_copy_elsewhere_is_taken_when_the_document_is_gone():
    text = "a section some other page repeats"
    old = Anchor("gone", 0, 100, text_hash(text))
    new = index(Chunk("with#same", "with", 0, 33, text_hash(text), text))
    assert only(plan_for(gold_doc(["gone#s"], anchors={"gone#s": old}), new)) == (AUTOMATIC, ("with#same",), "hash", 1.0)
