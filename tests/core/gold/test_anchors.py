"""Anchoring gold ids against an index, and keeping anchors fresh."""

from ci_eval.core.gold.anchors import Anchor, anchor_for, update_anchors
from ci_eval.core.gold.fingerprint import text_hash
from ci_eval.core.gold.goldset import Question
from ci_eval.core.gold.manifest import Chunk, ChunkIndex
from ci_eval.core.gold.minhash import signature


def idx(*chunks):
    return ChunkIndex("v", {c.id: c for c in chunks}, "m.json")


QUESTIONS = (Question("q1", "?", (("a", 1), ("b", 2))), Question("q2", "?", (("b", 1), ("gone", 1))))


def test_every_gold_id_in_the_index_is_anchored_once():
    a, b = Chunk("a", "d", 0, 4, text_hash("aaaa"), "aaaa"), Chunk("b", "d", 4, 8, text_hash("bbbb"))
    up = update_anchors(QUESTIONS, {}, idx(a, b))
    assert up.anchors == {"a": Anchor("d", 0, 4, text_hash("aaaa"), signature("aaaa"), 1),
                          "b": Anchor("d", 4, 8, text_hash("bbbb"))}
    assert (up.added, up.refreshed, up.missing) == (("a", "b"), (), ("gone",))


def test_same_text_refreshes_the_span_and_keeps_the_signature():
    old = Anchor("d", 0, 4, text_hash("aaaa"), signature("aaaa"))
    moved = Chunk("a", "d", 10, 14, text_hash("aaaa"))
    up = update_anchors(QUESTIONS[:1], {"a": old}, idx(moved))
    assert up.anchors["a"] == Anchor("d", 10, 14, text_hash("aaaa"), signature("aaaa"))
    assert up.refreshed == ("a",)


def test_an_id_whose_text_changed_keeps_its_old_anchor():
    old = Anchor("d", 0, 4, text_hash("aaaa"))
    up = update_anchors(QUESTIONS[:1], {"a": old}, idx(Chunk("a", "d", 0, 4, text_hash("other"))))
    assert up.anchors["a"] == old and up.refreshed == ()


def test_bare_ids_give_no_anchor_and_a_stale_id_keeps_its_anchor():
    old = Anchor(hash=text_hash("g"))
    up = update_anchors(QUESTIONS, {"gone": old}, idx(Chunk("a"), Chunk("b")))
    assert up.anchors == {"gone": old}
    assert anchor_for(Chunk("a")).empty
