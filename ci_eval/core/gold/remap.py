"""Remapping stale gold ids onto a re-ingested index, from the anchors the gold set keeps.

Every mapping has a ``confidence`` in [0, 1] with one meaning whatever the rule: the share
of the old chunk's text that the new ids hold together. A hash match holds all of it (1.0);
the old text found whole, or read word by word, in the new document gives it in words;
otherwise the text signature estimates it (``fingerprint.held``), or, with no text to
compare, the share of the old span the chunks cover.

Automatic means the text proves it. For each gold id missing from the new index, in order
of certainty:

1. ``hash``: one new chunk has the anchor's text hash -> automatic (moved or renamed).
   Several (duplicated text) -> a proposal. When the text is only in other documents while
   the anchor's own is still in the index, the document's own chunks come first: a copy.
2. ``span``: new chunks of the anchor's document overlap its old span; a chunk counts when
   at least half of it lies inside the old span (a piece of a split) or it holds at least
   half of the old span (a merge, a shifted boundary), and together they must hold half of
   it. Automatic when
   a. the new document, put back together from its chunks' texts, holds the old text whole
      (same hash) at the old offsets or, once only, elsewhere (an edit before it moved it):
      the span is then taken where the text is, its shares counted in words; or
   b. the old text is not whole there (edited), but reading it in the new document word by
      word (core/gold/alignment.py) decides: the hash proves the one reading, or every
      reading the text allows leads to the same chunks, counted in words; or
   c. the signature bears the span out: each
      chosen chunk holds no more than ``AGREE`` above and no less than ``SHORT`` below the
      share the span gives it, no other chunk
      holds more than ``EXTRA`` beyond its share or is mostly made of the old text, no
      chunk's share is near the deciding half (``AMBIGUOUS``), no chunk too short to
      measure lies near the span, and the chosen chunks hold at least ``AUTOMATIC_BAR``.
   Otherwise a span match is a proposal: offsets shift when a document is edited, and a
   manifest without text cannot show what they now hold.
3. ``text``: where the span is contradicted or absent, the chunks of the same document the
   signature says hold half of the old text or are half made of it -> a proposal (holding
   at least ``threshold``).
4. ``similar``: the document is gone; the chunk of the whole index with the closest text
   signature, holding at least ``threshold`` of the old text -> a proposal.
5. otherwise unresolved: the id stays stale.

A split maps one-to-many (each new id gets the old grade); several old ids landing on one
new id keep the highest grade. A grade a person gave to an id the index still holds is never
overwritten: a stale id whose new id is already graded otherwise in the same question is a
proposal showing both grades; accepted, it leaves that question as it was.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ci_eval.core.gold.alignment import readings, whole_copy, word_counter
from ci_eval.core.gold.anchors import Anchor, anchor_for, drifted_ids, gold_ids
from ci_eval.core.gold.fingerprint import SHINGLE, shingles, text_hash
from ci_eval.core.gold.manifest import Chunk, ChunkIndex
from ci_eval.core.gold.minhash import (
    decode_signature,
    estimated_size,
    held,
    shingle_values,
    signature_slots,
    similarity,
)
from ci_eval.core.gold.remap_record import applied_mappings

AUTOMATIC, PROPOSED, UNRESOLVED = "automatic", "proposed", "unresolved"
# What a re-chunk did to an old chunk, read from the mapping's new chunks: the same text
# under a new id (hash), cut into several chunks, taken into a larger one, or held by a
# chunk whose boundaries moved. `gold remap` reports how much of each was automatic.
MOVED, SPLIT, MERGED, SHIFTED = "moved", "split", "merged", "shifted"
EDITS = (MOVED, SPLIT, MERGED, SHIFTED)
# A single new chunk this much longer than the old one holds other text beside it: a merge.
_MERGED = 1.5
DEFAULT_THRESHOLD = 0.5
# The share of the old text the new ids must hold together, as the signature estimates it,
# for a mapping to be written without a person: the half that makes a chunk one of the new
# ids (a chunk holding less is a neighbour that took part of it).
AUTOMATIC_BAR = 0.5
# How far the text's share of the old chunk in a new one may stray from the span's claim:
# three standard errors of a 64-slot estimate (0.0625 at worst) and the cut shingles.
AGREE = 0.2
# How much less of the old text a chosen chunk may hold than the span gives it: an edit in
# place (a few words mended or reworded) removes the shingles around each changed word;
# text that is gone leaves the chunk near nothing. (On the re-ingestion benchmark 0.3 let
# one wrong remap through, 0.25 none.)
SHORT = 0.25
# A chunk the span leaves out holding more of the old text than the span gives it is never
# the cut shingles (they only lower a share): past the noise of a small share (two standard
# errors at 0.1) the text has moved there.
EXTRA = 0.1
# A share this near one half could fall on either side of the half that decides whether a
# chunk is one of the new ids once the offsets have moved by an edit the signature cannot
# see (AGREE): the chunk set is a guess, so a proposal.
AMBIGUOUS = 0.2
# LSH over the whole index when a document is gone: 16 bands of 4 slots finds a pair whose
# similarity is 0.5 with probability 1 - (1 - 0.5**4)**16 = 0.64, and 0.7 with 0.98.
_BANDS, _ROWS = 16, 4


@dataclass(frozen=True)
class Collision:
    question: str
    new: str  # the live id both name
    stale_grade: int  # the grade the stale id carries
    live_grade: int  # the grade a person gave the live id


@dataclass(frozen=True)
class Mapping:
    old: str
    new: tuple[str, ...]
    kind: str  # AUTOMATIC, PROPOSED or UNRESOLVED
    how: str  # "hash", "span", "text", "similar", or why unresolved
    confidence: float  # the estimated share of the old text the new ids hold, 0..1
    collisions: tuple[Collision, ...] = ()
    edit: str = ""  # what the re-chunk did to the old chunk (EDITS), "" when unresolved


@dataclass(frozen=True)
class RemapPlan:
    mappings: tuple[Mapping, ...]  # one per stale gold id, in the order the gold set names them
    from_version: str | None
    to_version: str | None

    def count(self, kind: str) -> int:
        return sum(m.kind == kind for m in self.mappings)

    def applied(self, accept_proposals: bool) -> dict[str, tuple[str, ...]]:
        kinds = {AUTOMATIC, PROPOSED} if accept_proposals else {AUTOMATIC}
        return {m.old: m.new for m in self.mappings if m.kind in kinds}


class _Evidence:
    """What the rules look up in the new index, built for the stale anchors only (a few
    thousand hashes and documents in an index of millions), and the shingle values and
    signatures of the new chunks, computed once and only for chunks looked at."""

    def __init__(self, index: ChunkIndex, anchors: list[Anchor]):
        self.index = index
        self.by_hash = index.with_hashes({a.hash for a in anchors if a.hash})
        self.by_doc = index.of_docs({a.doc for a in anchors if a.doc is not None})
        self._values: dict[str, object] = {}
        self._slots: dict[str, object] = {}
        self._docs: dict[str, str | None] = {}
        self._bands: dict | None = None

    def values(self, chunk: Chunk):
        if chunk.id not in self._values:
            self._values[chunk.id] = shingle_values(chunk.text) if chunk.text is not None else None
        return self._values[chunk.id]

    def of(self, chunk: Chunk):
        if chunk.id not in self._slots:
            self._slots[chunk.id] = signature_slots(chunk.text) if chunk.text is not None else None
        return self._slots[chunk.id]

    def near(self, slots) -> set[str]:
        if self._bands is None:
            self._bands = {}
            for chunk in self.index.chunks.values():
                s = self.of(chunk)
                if s is not None:
                    for b in range(_BANDS):
                        self._bands.setdefault((b, s[b * _ROWS:(b + 1) * _ROWS].tobytes()), []).append(chunk.id)
        found: set[str] = set()
        for b in range(_BANDS):
            found.update(self._bands.get((b, slots[b * _ROWS:(b + 1) * _ROWS].tobytes()), ()))
        return found

    def doc_text(self, doc: str) -> str | None:
        if doc not in self._docs:
            self._docs[doc] = _document_text(self.by_doc.get(doc, ()))
        return self._docs[doc]

    def held_by(self, slots, ids) -> float:
        """The estimated share of the signed text the chunks ``ids`` hold together."""
        hit = np.zeros(len(slots), dtype=bool)
        for cid in ids:
            values = self.values(self.index.chunks[cid])
            if values is not None:
                hit |= held(slots, values)
        return float(hit.mean())


def _by_hash(old: Anchor, ev: _Evidence) -> Mapping | None:
    same = ev.by_hash.get(old.hash) if old.hash else None
    if not same:
        return None
    if len(same) > 1 and old.doc is not None:
        in_doc = [c for c in same if ev.index.chunks[c].doc == old.doc]
        same = in_doc or same
    if len(same) == 1:
        return Mapping("", (same[0],), AUTOMATIC, "hash", 1.0)
    # Every copy holds the whole text: certain of the text, not of which copy.
    return Mapping("", tuple(sorted(same)), PROPOSED, "hash", 1.0)


@dataclass(frozen=True)
class _Span:
    ids: tuple[str, ...]
    shares: dict[str, float]  # chunk id -> the share of the old span it covers
    covered: float  # the share of the old span the chosen chunks cover together, 0..1
    close: bool  # a chunk is near one of the halves that decide whether it is chosen


def _span(old: Anchor, chunks: list[Chunk], size=None, whole=None) -> _Span | None:
    """``size(start, end)``: how much of the old text lies between two offsets; characters
    unless the caller has the text and counts its words. ``whole``: how much of the document
    does (a chunk's own size), the same unless an inserted piece is not the old text."""
    if not old.has_span or old.end <= old.start:
        return None
    size = size or (lambda a, b: b - a)
    whole = whole or size
    length = size(old.start, old.end) or 1
    targets, shares, pieces, close = [], {}, [], False
    for c in chunks:
        if c.start is None or c.end is None or min(old.end, c.end) <= max(old.start, c.start):
            continue
        overlap = size(max(old.start, c.start), min(old.end, c.end))
        own = whole(c.start, c.end) or 1
        shares[c.id] = overlap / length
        close = close or _near_half(max(overlap / length, overlap / own))
        if overlap and (2 * overlap >= own or 2 * overlap >= length):
            targets.append(c.id)
            pieces.append((max(old.start, c.start), min(old.end, c.end)))
    covered = _union_length(pieces, size) / length
    if targets and 2 * covered >= 1:
        return _Span(tuple(targets), shares, min(1.0, covered), close)
    return None


def _union_length(pieces: list[tuple[int, int]], size) -> int:
    """How much the intervals cover, each part counted once (overlapping chunks)."""
    total, reach = 0, None
    for s, e in sorted(pieces):
        if reach is None or s > reach:
            total, reach = total + size(s, e), e
        elif e > reach:
            total, reach = total + size(reach, e), e
    return total


_UNKNOWN = "\0"  # a character of the document no chunk's text gives


def _body(c: Chunk) -> str | None:
    """The chunk's text at its span: all of it, or, when the text is longer than the span,
    its end (a header the chunker put before the document's text: a title, a path, the
    metadata LlamaIndex's ``get_content`` prepends). None when it cannot be the span's."""
    if c.start is None or c.end is None or c.text is None:
        return None
    size = c.end - c.start
    if len(c.text) == size:
        return c.text
    return c.text[len(c.text) - size:] if len(c.text) > size else None


def _document_text(chunks) -> str | None:
    """The new document put back together from its chunks' texts at their offsets (a
    chunk's header left out), gaps as spaces and what no text covers as _UNKNOWN; None when
    a chunk's text cannot fit its span or two overlapping chunks disagree (a guessed header
    that is not one shows there)."""
    placed = [(c.start, _body(c)) for c in chunks if c.start is not None and c.text is not None]
    if not placed or any(body is None for _, body in placed):
        return None
    size = max(c.end for c in chunks if c.end is not None)
    out = [" "] * size
    for c in chunks:
        if c.start is not None and c.text is None:
            out[c.start:c.end] = _UNKNOWN * (c.end - c.start)
    for start, t in placed:
        if any(a not in (" ", _UNKNOWN) and a != b for a, b in zip(out[start:start + len(t)], t)):
            return None
        out[start:start + len(t)] = t
    return "".join(out)


def _located(old: Anchor, ev: _Evidence) -> Anchor | None:
    """The anchor at the offsets where the new document holds exactly its text (by hash):
    where it was, or, once only, anywhere else a word starts (text moved by an edit before
    it); None when the text is not there whole."""
    text = ev.doc_text(old.doc) if old.hash and old.has_span else None
    if text is None:
        return None
    length = old.end - old.start

    def at(i: int) -> bool:
        piece = text[i:i + length]
        return _UNKNOWN not in piece and text_hash(piece) == old.hash

    if at(old.start):
        return old
    found = [i for i in range(len(text) - length + 1) if (i == 0 or text[i - 1].isspace()) and at(i)]
    if len(found) == 1:
        return Anchor(old.doc, found[0], found[0] + length, old.hash, old.signature)
    slots = decode_signature(old.signature) if old.signature and not found else None
    where = whole_copy(text, slots, old.hash, old.words) if slots is not None else None
    if where is None:
        return None
    # the same words with other spacing (lines unwrapped, spaces collapsed): other length
    return Anchor(old.doc, where[0], where[1], old.hash, old.signature)


def _text_shares(slots, chunks: list[Chunk], ev: _Evidence) -> dict[str, tuple[float, float]] | None:
    """Chunk id -> (share of the old text it holds, share of it made of the old text), for
    every chunk of the document; None when one of them carries no text to compare."""
    size = estimated_size(slots)
    out = {}
    for c in chunks:
        values = ev.values(c)
        if values is None:
            if c.text is None:
                return None
            out[c.id] = (0.0, 0.0)  # a text without words holds none of the old one
            continue
        share = float(held(slots, values).mean())
        out[c.id] = (share, min(1.0, share * size / values.shape[1]))
    return out


def _corroborated(span: _Span, shares: dict[str, tuple[float, float]], tiny: bool) -> bool:
    """The text bears the span out: no chunk holds more of the old text than the span says
    it should (beyond ``EXTRA``), and no chunk the span leaves out is made mostly of it,
    which is how moved, reordered or shifted text shows; each chosen chunk holds what the
    span says, at most ``AGREE`` more or ``SHORT`` less. ``tiny``: a chunk too short for its shingles to show
    anything lies near the span, and the old text may have moved into it unseen."""
    for cid, (holds, made) in shares.items():
        chosen = cid in span.ids
        if holds > span.shares.get(cid, 0.0) + (AGREE if chosen else EXTRA) or (not chosen and made >= 0.5):
            return False
        if chosen and holds < span.shares[cid] - SHORT:  # the span's text is not there
            return False
    return not tiny


def _near_half(x: float) -> bool:
    return abs(x - 0.5) < AMBIGUOUS


def _by_text(slots, shares: dict[str, tuple[float, float]], ev: _Evidence, threshold: float) -> Mapping | None:
    """The chunks of the document the signature says hold at least half of the old text or
    are at least half made of it: a proposal, however clear (64 slots estimate a share to
    about 0.06, and the decision is at one half)."""
    ids = tuple(cid for cid, (holds, made) in shares.items() if holds >= 0.5 or made >= 0.5)
    if not ids:
        return None
    confidence = ev.held_by(slots, ids)
    return Mapping("", ids, PROPOSED, "text", confidence) if confidence >= threshold else None


def _in_document(old: Anchor, ev: _Evidence, threshold: float) -> Mapping | None:
    """Rules 2 and 3: the anchor's document is still in the index."""
    chunks = ev.by_doc.get(old.doc) if old.doc is not None else None
    if not chunks:
        return None
    found = _located(old, ev)
    text = ev.doc_text(old.doc) if found is not None else None
    exact = _span(found, chunks, lambda a, b: len(text[a:b].split())) if found is not None else None
    if exact is not None:  # the old text is in the document whole: the span is certain
        return Mapping("", exact.ids, AUTOMATIC, "span", exact.covered)
    slots = decode_signature(old.signature) if old.signature else None
    aligned = _aligned(old, chunks, slots, ev)
    if aligned is not None:
        return aligned
    span = _span(old, chunks)
    shares = _text_shares(slots, chunks, ev) if slots is not None else None
    if shares is None:  # nothing to check the offsets against: a person decides
        return Mapping("", span.ids, PROPOSED, "span", span.covered) if span else None
    reach = old.end - old.start if old.has_span else 0
    tiny = any(c.text is not None and len(shingles(c.text)) < SHINGLE and c.start is not None
               and c.start < old.end + reach and c.end > old.start - reach for c in chunks) if span else False
    if span:
        confidence = ev.held_by(slots, span.ids)
        if confidence >= AUTOMATIC_BAR and not span.close and _corroborated(span, shares, tiny):
            return Mapping("", span.ids, AUTOMATIC, "span", confidence)
    found = _by_text(slots, shares, ev, threshold)
    if found is None and span:  # the text does not bear the span out: a person decides
        return Mapping("", span.ids, PROPOSED, "span", ev.held_by(slots, span.ids))
    return found


def _aligned(old: Anchor, chunks: list[Chunk], slots, ev: _Evidence) -> Mapping | None:
    """Rule 2b: the old text read in the new document shingle by shingle (core/gold/
    alignment.py): automatic when the hash proves the one reading, or when every reading
    the text allows chooses the same chunks, its shares counted in words, whether its
    unseen end words are old text or not."""
    text = ev.doc_text(old.doc)
    if slots is None or text is None or not old.has_span:
        return None
    found = readings(text, slots, old.end - old.start, old.hash)
    if not found:
        return None
    whole = word_counter(text)
    # Whether a reading's unseen end words are old text or new, every reading must choose
    # the same chunks. (The anchor's word count cannot settle it: a typo fixed near the end
    # keeps it, and so does a phrase reworded one word for one.)
    chosen = []
    for r in found:
        for holes in {r.holes, r.holes + r.unsure}:
            span = _span(Anchor(old.doc, r.start, r.end), chunks, word_counter(text, holes), whole)
            chosen.append((span.ids, span.covered) if span is not None else None)
    if None in chosen or len({ids for ids, _ in chosen}) != 1:
        return None
    return Mapping("", chosen[0][0], AUTOMATIC, "span", min(c for _, c in chosen))


def _by_similarity(old: Anchor, ev: _Evidence, threshold: float) -> Mapping | None:
    slots = decode_signature(old.signature) if old.signature else None
    if slots is None or (old.doc is not None and ev.by_doc.get(old.doc)):
        return None
    best, best_id = -1.0, None
    for cid in sorted(ev.near(slots)):
        theirs = ev.of(ev.index.chunks[cid])
        if theirs is not None:
            score = similarity(slots, theirs)
            if score > best:
                best, best_id = score, cid
    if best_id is None:
        return None
    confidence = ev.held_by(slots, (best_id,))
    if confidence >= threshold:
        return Mapping("", (best_id,), PROPOSED, "similar", confidence)
    return None


def _elsewhere(found: Mapping, old: Anchor, ev: _Evidence) -> bool:
    return (old.doc is not None and old.doc in ev.by_doc
            and all(ev.index.chunks[c].doc != old.doc for c in found.new))


def _why_unresolved(old: Anchor | None, ev: _Evidence) -> str:
    if old is None or old.empty:
        return "no anchor"
    if old.doc is not None and old.doc not in ev.by_doc and old.hash not in ev.by_hash:
        return "document gone"
    return "no match"


def _remap_one(cid: str, old: Anchor | None, ev: _Evidence, threshold: float) -> Mapping:
    found = None
    if old is not None:
        found = _by_hash(old, ev)
        if found is not None and _elsewhere(found, old, ev):
            # The same text in another document while the old one is still there is a copy
            # (pages that repeat a section): the chunk's own document, re-cut, comes first.
            found = _in_document(old, ev, threshold) or found
        found = found or _in_document(old, ev, threshold) or _by_similarity(old, ev, threshold)
    if found is None:
        return Mapping(cid, (), UNRESOLVED, _why_unresolved(old, ev), 0.0)
    return Mapping(cid, found.new, found.kind, found.how, found.confidence, edit=_edit_of(old, found, ev.index))


def _size(chunk: Chunk) -> int | None:
    if chunk.start is not None and chunk.end is not None:
        return chunk.end - chunk.start
    return len(chunk.text) if chunk.text is not None else None


def _edit_of(old: Anchor, found: Mapping, index: ChunkIndex) -> str:
    """The kind of edit a mapping says the old chunk went through (EDITS)."""
    if found.how == "hash":
        return MOVED
    if len(found.new) > 1:
        return SPLIT
    new = _size(index.chunks[found.new[0]])
    was = old.end - old.start if old.has_span else None
    return MERGED if new is not None and was and new >= _MERGED * was else SHIFTED


def misfit(gold, index: ChunkIndex) -> str | None:
    """Why ``index`` is not an index the gold set can be remapped onto, or None when it is.

    Versions are names, not an order, so "older" is read from the gold set's history: a
    version it was remapped away from is an index it has left behind."""
    version, own = index.version, gold.index_version
    if version is None and own is not None:
        return (f"the manifest names no version and the gold set is for index {own!r}: "
                "pass --to-version with the new index's version")
    if version is not None and version == own:
        stale = [cid for cid in gold_ids(gold.questions) if cid not in index.chunks]
        if stale:
            return (f"the manifest is version {version!r}, the gold set's own, yet lacks {len(stale)} of its "
                    f"ids (first: {stale[0]!r}): not the index the gold set was written for")
        return None
    for remap in (gold.provenance or {}).get("remaps") or ():
        if isinstance(remap, dict) and version is not None and remap.get("from_index_version") == version:
            return (f"the gold set was remapped from index {version!r} to {remap.get('to_index_version')!r}"
                    f" ({remap.get('at', 'at an unrecorded time')}): the manifest is an index it has left behind")
    return None


def plan_remap(gold, anchors: dict[str, Anchor], index: ChunkIndex,
               threshold: float = DEFAULT_THRESHOLD) -> RemapPlan:
    """One Mapping for every gold id of ``gold`` (a GoldSet) that ``index`` no longer holds,
    or holds with other text than its anchor's (drifted: stale too, mapped by the same evidence)."""
    drifted = drifted_ids(gold.questions, anchors, index)
    stale = [cid for cid in gold_ids(gold.questions) if cid not in index.chunks or cid in drifted]
    ev = _Evidence(index, [anchors[c] for c in stale if c in anchors])
    mappings = tuple(_remap_one(cid, anchors.get(cid), ev, threshold) for cid in stale)
    return RemapPlan(_with_collisions(mappings, gold.questions, index), gold.index_version, index.version)


def _with_collisions(mappings: tuple[Mapping, ...], questions, index: ChunkIndex) -> tuple[Mapping, ...]:
    """A mapping onto an id a question already grades differently (a person's grade on a
    live id) becomes a proposal carrying both grades: which one is right is not evidence a
    remap has."""
    by_old = {m.old: m for m in mappings}
    found: dict[str, list[Collision]] = {}
    for q in questions:
        grades = dict(q.gold)
        for cid, grade in q.gold:
            m = by_old.get(cid)
            if m is None or m.kind == UNRESOLVED:
                continue
            for new in m.new:
                # An id that is itself mapped away for sure (drifted: its text moved on)
                # takes its grade with it, so nothing is left on it to collide with.
                moving = new in by_old and by_old[new].kind == AUTOMATIC
                if new in index.chunks and new in grades and grades[new] != grade and not moving:
                    found.setdefault(cid, []).append(Collision(q.id, new, grade, grades[new]))
    return tuple(Mapping(m.old, m.new, PROPOSED, m.how, m.confidence, tuple(found[m.old]), m.edit)
                 if m.old in found else m for m in mappings)


def _remapped_gold(raw_gold, mapping: dict[str, tuple[str, ...]]):
    """A question's ``gold`` with mapped ids replaced: binary stays a list, graded keeps the
    highest grade where several old ids meet on one new id; a mapped id that meets a live id
    graded otherwise (an accepted collision) stays as it was, beside it, for a person."""
    if isinstance(raw_gold, list):
        out: dict[str, None] = {}
        for cid in raw_gold:
            for new in mapping.get(cid, (cid,)):
                out.setdefault(new, None)
        return list(out)
    live = {cid for cid in raw_gold if cid not in mapping}
    graded: dict[str, int] = {}
    for cid, grade in raw_gold.items():
        news = mapping.get(cid, (cid,))
        if cid not in live and any(n in live and raw_gold[n] != grade for n in news):
            news = (cid,)  # a person's grade on a live id is never overwritten: both stay
        for new in news:
            graded[new] = grade if new in live else max(grade, graded.get(new, grade))
    return graded


def apply_plan(document: dict, plan: RemapPlan, index: ChunkIndex, *, accept_proposals: bool,
               record: dict) -> dict:
    """The gold-set document rewritten by the plan (a new dict; ``document`` is untouched):
    mapped ids replaced, their anchors moved to the new ids, ``index_version`` set to the
    new index's, and ``record`` (who, when) completed with the counts and each applied
    old -> new id with its rule (core/gold/remap_record.py) and appended to ``provenance.remaps``."""
    mapping = plan.applied(accept_proposals)
    out = copy.deepcopy(document)
    for q in out.get("questions", ()):
        q["gold"] = _remapped_gold(q["gold"], mapping)
    anchors = dict(out.get("anchors") or {})
    still_named = {cid for q in out.get("questions", ()) for cid in q["gold"]}
    for old, news in mapping.items():
        if old not in still_named:
            anchors.pop(old, None)
        for new in news:
            fresh = anchor_for(index.chunks[new]).as_json()
            if fresh:
                anchors[new] = fresh
    if anchors:
        out["anchors"] = dict(sorted(anchors.items()))
        out["schema_version"] = max(2, out.get("schema_version", 1))
    if index.version is not None:
        out["index_version"] = index.version
    proposed = plan.count(PROPOSED)
    entry = dict(record, from_index_version=plan.from_version, to_index_version=plan.to_version,
                 automatic=plan.count(AUTOMATIC),
                 proposals_accepted=proposed if accept_proposals else 0,
                 proposals_left=0 if accept_proposals else proposed,
                 unresolved=plan.count(UNRESOLVED),
                 mappings=applied_mappings(plan, accept_proposals))
    provenance = dict(out.get("provenance") or {})
    provenance["remaps"] = [*provenance.get("remaps", []), entry]
    out["provenance"] = provenance
    return out


def format_plan(plan: RemapPlan, accept_proposals: bool = False) -> str:
    """The plan as a terminal table, one row per stale id, then the counts."""
    from tabulate import tabulate

    if not plan.mappings:
        return "no stale gold ids: nothing to remap"
    rows = [(m.old, ", ".join(m.new) or "-", m.kind, m.how,
             f"{m.confidence:.2f}" if m.kind != UNRESOLVED else "-") for m in plan.mappings]
    table = tabulate(rows, headers=("stale id", "new ids", "kind", "how", "confidence"), tablefmt="simple",
                     disable_numparse=True)
    auto, proposed, unresolved = plan.count(AUTOMATIC), plan.count(PROPOSED), plan.count(UNRESOLVED)
    tail = (f"{len(plan.mappings)} stale gold id(s): {auto} automatic, {proposed} proposed"
            f"{' (accepted)' if accept_proposals and proposed else ''}, {unresolved} unresolved")
    by_edit = edit_counts(plan)
    if by_edit:
        tail += "\nautomatic by edit: " + ", ".join(f"{edit} {auto} of {total}" for edit, (auto, total) in by_edit.items())
    clashes = [(m.old, c) for m in plan.mappings for c in m.collisions]
    if clashes:
        tail += "\ngrade collisions (proposed; even accepted, both ids stay until a person settles them):" + "".join(
            f"\n  question {c.question!r}: {old} (grade {c.stale_grade}) -> {c.new}, which it already grades "
            f"{c.live_grade}" for old, c in clashes)
    return f"{table}\n{tail}"


def edit_counts(plan: RemapPlan) -> dict[str, tuple[int, int]]:
    """For each kind of edit the mappings found (EDITS, in that order): how many were
    automatic, of how many mapped (automatic or proposed)."""
    out = {}
    for edit in EDITS:
        found = [m for m in plan.mappings if m.edit == edit and m.kind != UNRESOLVED]
        if found:
            out[edit] = (sum(m.kind == AUTOMATIC for m in found), len(found))
    return out


def remap_summary(plan: RemapPlan, limit: int = 100) -> dict:
    """What a run artefact records of the remap its stale ids have: the counts, and up to
    ``limit`` old -> new ids (automatic and proposed) for the PR's annotations."""
    found = [m for m in plan.mappings if m.kind != UNRESOLVED][:limit]
    return {"automatic": plan.count(AUTOMATIC), "proposed": plan.count(PROPOSED),
            "unresolved": plan.count(UNRESOLVED),
            "to": {m.old: {"new": list(m.new), "kind": m.kind} for m in found}}


def remap_targets(summary: dict | None) -> dict[str, tuple[list[str], str]]:
    """A recorded remap summary's old id -> (new ids, kind)."""
    return {old: (target["new"], target["kind"]) for old, target in ((summary or {}).get("to") or {}).items()}


def remap_hint(summary: dict | None) -> str:
    """One sentence telling the user what to run, or "" when no stale id has a remap."""
    if not summary or not (summary.get("automatic") or summary.get("proposed")):
        return ""
    total = summary["automatic"] + summary["proposed"] + summary["unresolved"]
    auto, proposed = summary["automatic"], summary["proposed"]
    text = (f"{auto} of the {total} distinct stale gold id{'s' if total != 1 else ''} "
            f"{'has' if auto == 1 else 'have'} an automatic remap")
    if proposed:
        text += f" and {proposed} a proposed one (add `--accept-proposals` to take {'it' if proposed == 1 else 'them'})"
    return text + ": run `ci-eval gold remap --write` to update the gold set."
