"""Reading an edited chunk's old text in its new document (core/gold/alignment.py), and the
remaps it decides near the half that makes a new chunk one of the new ids.

Every expected chunk set is counted in the test from word identities (the words are
distinct tokens, so which old word a new chunk holds is plain), never pasted."""

from __future__ import annotations

import pytest

from ci_eval.core.gold.alignment import readings
from ci_eval.core.gold.anchors import anchor_for
from ci_eval.core.gold.fingerprint import text_hash
from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.core.gold.manifest import Chunk, ChunkIndex
from ci_eval.core.gold.minhash import signature_slots
from ci_eval.core.gold.remap import AUTOMATIC, plan_remap


def cut(doc: str, words: list[str], size: int) -> list[Chunk]:
    """Windows of ``size`` words with their offsets and text, as a chunker's manifest gives."""
    out, at = [], 0
    offsets = []
    for w in words:
        offsets.append(at)
        at += len(w) + 1
    for i in range(0, len(words), size):
        text = " ".join(words[i:i + size])
        out.append(Chunk(f"n{i}", doc, offsets[i], offsets[i] + len(text), text_hash(text), text))
    return out


def true_ids(old_words: list[str], chunks: list[Chunk]) -> tuple[str, ...]:
    """The new chunks holding at least half of the old words, or made at least half of them."""
    old = set(old_words)
    found = []
    for c in chunks:
        mine = c.text.split()
        shared = sum(w in old for w in mine)
        if shared and (2 * shared >= len(old) or 2 * shared >= len(mine)):
            found.append(c.id)
    return tuple(found)


def remap_one(old_words: list[str], old_doc_words: list[str], new_chunks: list[Chunk]):
    first = old_doc_words.index(old_words[0])
    old_chunk = cut("d", old_doc_words, len(old_words))[first // len(old_words)]
    assert old_chunk.text == " ".join(old_words)
    doc = {"schema_version": 2, "index_version": "v1",
           "questions": [{"id": "q1", "question": "what?", "gold": ["d#1"]}],
           "anchors": {"d#1": anchor_for(old_chunk).as_json()}}
    gold = parse_gold_set(doc, "gold.json")
    (m,) = plan_remap(gold, gold.anchors, ChunkIndex("v2", {c.id: c for c in new_chunks}, "new.json")).mappings
    return m


OLD = [f"w{i}" for i in range(160)]
CHUNK = OLD[40:80]  # the old gold chunk: 40 words


def test_a_sentence_inserted_inside_the_chunk_is_proven_by_the_hash_and_taken_automatically():
    sentence = [f"s{i}" for i in range(9)]
    new = OLD[:61] + sentence + OLD[61:]
    chunks = cut("d", new, 20)
    # The new windows cut the old 40 words 20 / 1 + 9 new + 10 / 10: the window of w60 and
    # the sentence holds 1 old word of its 20 and w61..w70 hold 10 of 40: only the half-bar
    # decides, which 64 slots cannot (each share is estimated to about 0.06).
    truth = true_ids(CHUNK, chunks)
    m = remap_one(CHUNK, OLD, chunks)
    assert (m.kind, m.new, m.how) == (AUTOMATIC, truth, "span")
    assert 0 <= m.confidence <= 1
    found = readings(" ".join(new), signature_slots(" ".join(CHUNK)), len(" ".join(CHUNK)), text_hash(" ".join(CHUNK)))
    assert len(found) == 1 and found[0].proven


def test_words_mended_in_place_are_read_word_by_word_and_taken_when_every_reading_agrees():
    new = list(OLD)
    for i in (44, 58, 71):
        new[i] += "e"  # a typo mended: the same word, one letter more
    chunks = cut("d", new, 25)
    # Old words 40..79 against windows 25..49 (10 of them), 50..74 (25), 75..99 (5).
    truth = true_ids([w for w in new[40:80]], chunks)
    m = remap_one(CHUNK, OLD, chunks)
    assert (m.kind, m.new) == (AUTOMATIC, truth)


def test_a_recurring_phrase_after_an_edit_proves_nothing():
    # The old chunk ends in "r1 r2 r3"; the edit rewords them and the phrase recurs later:
    # the old text's hash then agrees with the new document less an "inserted" run, but the
    # words are not the old chunk's own.
    old_doc = OLD[:37] + ["r1", "r2", "r3"] + OLD[40:]
    old_chunk = old_doc[:40]
    new = OLD[:37] + ["x1", "x2", "x3", "x4", "x5", "u0", "r1", "r2", "r3"] + OLD[40:]
    text, doc = " ".join(old_chunk), " ".join(new)
    found = readings(doc, signature_slots(text), len(text), text_hash(text))
    # Nothing proven: the hash's reading stands beside the one without the phrase, and a
    # mapping is written only when both choose the same chunks.
    assert found and not any(r.proven for r in found)
    assert any(not r.holes and doc[r.start:r.end] == " ".join(OLD[:37]) for r in found)


@pytest.mark.parametrize("size, inserted, same", [(20, 9, True), (36, 3, False)])
def test_a_short_piece_past_an_insertion_decides_only_when_it_cannot_change_the_chunks(size, inserted, same):
    # The old chunk (a whole document) ends in one word after an inserted sentence: that
    # word may be the old one or the same word written anew. With windows of 20 both
    # readings choose the same chunks, so the remap is written; with windows of 36 the
    # last window (w36..w38, the sentence, w39) is half old words only with w39 counted.
    sentence = [f"s{i}" for i in range(inserted)]
    old_doc = OLD[:40]
    new = old_doc[:39] + sentence + old_doc[39:]
    chunks = cut("d", new, size)
    with_word, without = true_ids(old_doc, chunks), true_ids(old_doc[:39], chunks)
    assert (with_word == without) == same
    m = remap_one(old_doc, old_doc, chunks)
    if with_word == without:
        assert (m.kind, m.new) == (AUTOMATIC, with_word)
    else:
        assert m.kind != AUTOMATIC


def test_one_old_word_past_an_inserted_sentence_leaves_the_reading_unsure():
    # No shingle can show a single word after the insertion, so the in-place readings end
    # before it; the hash shows the old text goes on, and nothing is read as certain.
    sentence = [f"s{i}" for i in range(9)]
    new = OLD[:79] + sentence + OLD[79:]
    text = " ".join(CHUNK)
    assert readings(" ".join(new), signature_slots(text), len(text), text_hash(text)) == []


def test_text_moved_apart_is_read_as_its_two_pieces():
    # Two paragraphs swapped across the chunk: its halves now lie 60 words apart, and the
    # hash proves the one pair of places whose words, end to end, are the old text.
    new = OLD[:40] + OLD[60:120] + OLD[40:60] + OLD[120:]
    text, doc = " ".join(CHUNK), " ".join(new)
    head, tail = " ".join(w for w in new if w in CHUNK[:CHUNK.index(OLD[60])]), " ".join(CHUNK[CHUNK.index(OLD[60]):])
    found = readings(doc, signature_slots(text), len(text), text_hash(text))
    assert len(found) == 1 and found[0].proven
    (r,) = found
    assert (r.start, r.end) == (doc.index(tail), doc.index(head) + len(head))
    assert r.holes == ((doc.index(tail) + len(tail), doc.index(head)),)


def test_text_moved_apart_whose_piece_recurs_has_no_reading():
    # The same swap, with the old text's second piece also written at the top: it could
    # stand at either place, so nothing is proven.
    new = OLD[60:80] + OLD[:40] + OLD[60:120] + OLD[40:60] + OLD[120:]
    text = " ".join(CHUNK)
    assert readings(" ".join(new), signature_slots(text), len(text), text_hash(text)) == []
