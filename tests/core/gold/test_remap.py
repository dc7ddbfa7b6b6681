"""The remap rules on small hand-made chunkings, and the rewritten gold set."""

from __future__ import annotations

import copy

import pytest

from ci_eval.core.gold.anchors import Anchor, anchor_for
from ci_eval.core.gold.fingerprint import text_hash
from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.core.gold.manifest import Chunk, ChunkIndex
from ci_eval.core.gold.minhash import signature
from ci_eval.core.gold.remap import AUTOMATIC, PROPOSED, UNRESOLVED, apply_plan, plan_remap


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


class Doc:
    """A document of distinct words, cut into chunks by word positions, the way a chunker
    with offsets writes its manifest."""

    def __init__(self, name: str, words_: list[str]):
        self.name, self.words = name, words_
        self.offsets = [0]
        for w in words_:
            self.offsets.append(self.offsets[-1] + len(w) + 1)

    def chunk(self, cid: str, first: int, last: int) -> Chunk:
        text = " ".join(self.words[first:last])
        return Chunk(cid, self.name, self.offsets[first], self.offsets[first] + len(text), text_hash(text), text)


DOC = Doc("d", words(0, 120).split())


def test_split_chunk_maps_to_both_halves_with_the_grade():
    old = anchor_for(DOC.chunk("d#1", 20, 40))
    new = index(DOC.chunk("d:0", 0, 20), DOC.chunk("d:100", 20, 30), DOC.chunk("d:150", 30, 40),
                DOC.chunk("d:200", 40, 120))
    doc = gold_doc({"d#1": 2}, anchors={"d#1": old})
    plan = plan_for(doc, new)
    # The old text is in the new document whole, where it was: both halves lie inside it
    # and hold all of its 20 words between them.
    assert only(plan) == (AUTOMATIC, ("d:100", "d:150"), "span", 20 / 20)
    out = apply_plan(doc, plan, new, accept_proposals=False, record={"by": "t", "at": "now"})
    assert out["questions"][0]["gold"] == {"d:100": 2, "d:150": 2}


def test_merged_chunks_keep_the_highest_grade():
    a, b = anchor_for(DOC.chunk("d#2", 20, 40)), anchor_for(DOC.chunk("d#3", 40, 60))
    new = index(DOC.chunk("d:0", 0, 20), DOC.chunk("d:200", 20, 60), DOC.chunk("d:600", 60, 120))
    doc = gold_doc({"d#2": 1, "d#3": 3}, anchors={"d#2": a, "d#3": b})
    plan = plan_for(doc, new)
    # Each old span is wholly inside the merged chunk: it holds all 20 of each one's words.
    assert [(m.old, m.new, m.kind, m.confidence) for m in plan.mappings] == [
        ("d#2", ("d:200",), AUTOMATIC, 1.0), ("d#3", ("d:200",), AUTOMATIC, 1.0)]
    out = apply_plan(doc, plan, new, accept_proposals=False, record={})
    assert out["questions"][0]["gold"] == {"d:200": max(1, 3)}


def test_shifted_boundary_takes_the_chunk_holding_most_of_the_span():
    old = anchor_for(DOC.chunk("d#1", 10, 30))
    new = index(DOC.chunk("d:0", 0, 26), DOC.chunk("d:26", 26, 120))
    # d:0 holds 16 of the old 20 words (at least half of the old span); d:26 holds 4, under
    # half of the old span and under half of its own 94.
    assert only(plan_for(gold_doc(["d#1"], anchors={"d#1": old}), new)) == (AUTOMATIC, ("d:0",), "span", 16 / 20)


def swapped_and_edited(edit):
    """Paragraphs swapped and the moved one edited by ``edit``: the old offsets now hold the
    other paragraph, the old text (under another hash) sits after it. The one mapping."""
    p1, p2 = words(0, 30), words(100, 30)
    old = Anchor("d", 0, len(p1), text_hash(p1), signature(p1))
    moved = edit(p1)
    new = index(Chunk("n1", "d", 0, len(p2), text_hash(p2), p2),
                Chunk("n2", "d", len(p2) + 1, len(p2) + 1 + len(moved), text_hash(moved), moved))
    return only(plan_for(gold_doc(["a"], anchors={"a": old}), new))


def test_a_span_whose_text_moved_elsewhere_is_not_taken_the_text_is_read_where_it_went():
    kind, ids, how, confidence = swapped_and_edited(lambda p1: p1.replace("w7 ", "w7x "))
    # Never n1, which the old offsets point at: the old text is read word by word in n2,
    # one word mended in place, so n2 holds all 30 of its words. The confidence is the least
    # over the readings, and one may take a word of n1 within the length slack: 30 of 31.
    assert (kind, ids, how) == (AUTOMATIC, ("n2",), "span")
    assert 30 / 31 <= confidence <= 30 / 30


def test_a_span_whose_text_moved_elsewhere_and_was_reworded_is_not_automatic():
    # Five words of the moved paragraph reworded: no reading bounds it (more than three
    # unseen words inside), and the signature alone only proposes.
    kind, ids, how, confidence = swapped_and_edited(lambda p1: p1.replace("w10 w11 w12 w13 w14 ", "x1 x2 x3 x4 x5 "))
    # n2 holds the old text but for the 7 shingles touching the five words: 21 of 28.
    assert (kind, ids, how) == (PROPOSED, ("n2",), "text")
    assert abs(confidence - 21 / 28) < 0.2


def test_a_span_without_text_to_check_it_is_only_proposed():
    old = Anchor("d", 100, 200, text_hash("before"))
    new = index(Chunk("d:100", "d", 100, 150, text_hash("x")), Chunk("d:150", "d", 150, 200, text_hash("y")))
    # Hashes alone cannot say whether the offsets still hold the old text.
    assert only(plan_for(gold_doc(["d#1"], anchors={"d#1": old}), new)) == (PROPOSED, ("d:100", "d:150"), "span", 1.0)


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
    # 28 shingles on each side, the 3 holding word 15 differ: n1 holds 25 / 28 of the old.
    assert (kind, ids, how) == (PROPOSED, ("n1",), "text")
    assert abs(score - 25 / 28) < 0.2


def test_edited_chunk_keeps_its_span_match_when_the_text_bears_it_out():
    edited = Doc("d", [w if i != 10 else "edited" for i, w in enumerate(DOC.words)])
    old = anchor_for(DOC.chunk("d#0", 0, 40))
    new = index(edited.chunk("d:0", 0, 40), edited.chunk("d:40", 40, 120))
    kind, ids, how, confidence = only(plan_for(gold_doc(["d#0"], anchors={"d#0": old}), new))
    # The edit removes the 3 shingles holding word 10: d:0 holds 35 of the old 38, where
    # the span says all of it, and d:40 none, as the span says.
    assert (kind, ids, how) == (AUTOMATIC, ("d:0",), "span")
    assert abs(confidence - 35 / 38) < 0.2


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
    # Each copy holds the whole text (confidence 1); which copy is the chunk is the guess.
    assert only(plan_for(gold_doc(["old"], anchors={"old": old}), new)) == (PROPOSED, ("a", "b"), "hash", 1.0)


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
    moved_text = "moved text"
    new = index(Chunk("m2", "e", 0, 10, text_hash(moved_text), moved_text),
                DOC.chunk("d:0", 0, 20), DOC.chunk("d:20", 20, 40), DOC.chunk("d:40", 40, 120), Chunk("kept"))
    doc = gold_doc(["m1", "kept"], ["d#0", "lost"], anchors={
        "m1": Anchor(hash=text_hash(moved_text)), "d#0": anchor_for(DOC.chunk("d#0", 0, 40)),
        "lost": Anchor("nowhere", 0, 5)})
    before = copy.deepcopy(doc)
    plan = plan_for(doc, new)
    out = apply_plan(doc, plan, new, accept_proposals=False, record={"by": "ana", "at": "2026-01-01T00:00:00Z"})
    assert doc == before
    assert [q["gold"] for q in out["questions"]] == [["m2", "kept"], ["d:0", "d:20", "lost"]]
    assert set(out["anchors"]) == {"m2", "d:0", "d:20", "lost"}
    assert out["anchors"]["m2"] == {"doc": "e", "start": 0, "end": 10, "hash": text_hash(moved_text),
                                    "signature": signature(moved_text), "words": len(moved_text.split())}
    assert out["index_version"] == "v2" and out["schema_version"] == 2
    assert out["provenance"]["remaps"] == [{
        "by": "ana", "at": "2026-01-01T00:00:00Z", "from_index_version": "v1", "to_index_version": "v2",
        "automatic": 2, "proposals_accepted": 0, "proposals_left": 0, "unresolved": 1,
        "mappings": {"m1": {"new": ["m2"], "rule": "automatic"},
                     "d#0": {"new": ["d:0", "d:20"], "rule": "automatic"}}}]
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
    compound = Doc("compound", words(0, 40).split())
    text = words(0, 40)
    old = anchor_for(compound.chunk("compound#s", 0, 40))
    new = index(Chunk("with#same", "with", 0, len(text), text_hash(text), text),
                compound.chunk("compound#s/1", 0, 20), compound.chunk("compound#s/2", 20, 40))
    assert only(plan_for(gold_doc(["compound#s"], anchors={"compound#s": old}), new)) == (
        AUTOMATIC, ("compound#s/1", "compound#s/2"), "span", 1.0)


def test_a_copy_elsewhere_is_taken_when_the_document_is_gone():
    text = "a section some other page repeats"
    old = Anchor("gone", 0, 100, text_hash(text))
    new = index(Chunk("with#same", "with", 0, 33, text_hash(text), text))
    assert only(plan_for(gold_doc(["gone#s"], anchors={"gone#s": old}), new)) == (AUTOMATIC, ("with#same",), "hash", 1.0)


def test_confidence_is_a_share_within_0_and_1_for_overlapping_chunks():
    edited = Doc("d", [w if i != 50 else "edited" for i, w in enumerate(DOC.words)])
    old = anchor_for(DOC.chunk("d#0", 0, 60))
    new = index(edited.chunk("w0", 0, 40), edited.chunk("w20", 20, 60), edited.chunk("w40", 40, 80))
    (m,) = plan_for(gold_doc(["d#0"], anchors={"d#0": old}), new).mappings
    # Three windows overlap the old 60 words by 40, 40 and 20: counted once, they hold at
    # most all of it, never 100 / 60.
    assert 0.0 <= m.confidence <= 1.0


def test_a_grade_on_a_live_id_makes_the_remap_a_proposal_with_both_grades():
    text = words(0, 20)
    doc = gold_doc({"a": 3, "n1": 0}, anchors={"a": Anchor(hash=text_hash(text))})
    new = index(Chunk("n1", None, None, None, text_hash(text), text))
    plan = plan_for(doc, new)
    (m,) = plan.mappings
    assert (m.kind, m.new, [(c.question, c.new, c.stale_grade, c.live_grade) for c in m.collisions]) == (
        PROPOSED, ("n1",), [("q1", "n1", 3, 0)])
    accepted = apply_plan(doc, plan, new, accept_proposals=True, record={})
    assert accepted["questions"][0]["gold"] == {"a": 3, "n1": 0}
