"""Anchors: the fingerprint of the chunk each gold id named, stored in the gold set.

A gold set's optional ``anchors`` object maps a chunk id to what was known of that chunk
when it was anchored: ``doc``, ``start``/``end``, ``hash`` and ``signature`` (see
core/gold/fingerprint.py). One anchor per chunk id, shared by every question that names it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.gold.manifest import Chunk, ChunkIndex


@dataclass(frozen=True)
class Anchor:
    doc: str | None = None
    start: int | None = None
    end: int | None = None
    hash: str | None = None
    signature: str | None = None
    words: int | None = None  # whitespace-separated words in the text

    @property
    def has_span(self) -> bool:
        return self.doc is not None and self.start is not None and self.end is not None

    def as_json(self) -> dict:
        return {k: v for k, v in (("doc", self.doc), ("start", self.start), ("end", self.end),
                                  ("hash", self.hash), ("signature", self.signature), ("words", self.words))
                if v is not None}

    @property
    def empty(self) -> bool:
        return not self.as_json()


def anchor_for(chunk: Chunk) -> Anchor:
    # Imported here: reading a gold set's anchors needs no signature, and `check` reads
    # gold sets without numpy (core/gold/fingerprint.py).
    from ci_eval.core.gold.minhash import signature

    return Anchor(chunk.doc, chunk.start, chunk.end, chunk.hash,
                  signature(chunk.text) if chunk.text is not None else None,
                  len(chunk.text.split()) if chunk.text is not None else None)


def parse_anchors(raw: dict | None) -> dict[str, Anchor]:
    """The gold set's ``anchors`` object (already checked against the gold-set schema)."""
    return {cid: Anchor(a.get("doc"), a.get("start"), a.get("end"), a.get("hash"), a.get("signature"), a.get("words"))
            for cid, a in (raw or {}).items()}


def gold_ids(questions) -> list[str]:
    """Every chunk id the gold set names, in the order it first names them."""
    seen: dict[str, None] = {}
    for q in questions:
        for cid, _ in q.gold:
            seen.setdefault(cid, None)
    return list(seen)


@dataclass(frozen=True)
class AnchorUpdate:
    anchors: dict[str, Anchor]  # the gold set's anchors after the update
    added: tuple[str, ...]  # gold ids anchored for the first time
    refreshed: tuple[str, ...]  # anchors whose recorded fingerprint changed
    missing: tuple[str, ...]  # gold ids not in the index (stale): their old anchor is kept


def _same_text(old: Anchor, chunk: Chunk) -> bool:
    # Without a hash on either side there is nothing to contradict the id.
    return old.hash is None or chunk.hash is None or old.hash == chunk.hash


def update_anchors(questions, anchors: dict[str, Anchor], index: ChunkIndex) -> AnchorUpdate:
    """Anchor every gold id the index still holds, refreshing anchors whose id still names
    the same text; an id whose text changed keeps its old anchor, the evidence a remap needs."""
    out: dict[str, Anchor] = {}
    added, refreshed, missing = [], [], []
    for cid in gold_ids(questions):
        old = anchors.get(cid)
        chunk = index.chunks.get(cid)
        if chunk is None:
            missing.append(cid)
            if old is not None:
                out[cid] = old
            continue
        if old is not None and not _same_text(old, chunk):
            out[cid] = old
            continue
        new = anchor_for(chunk)
        if old is not None and new.signature is None and new.hash == old.hash:
            new = Anchor(new.doc, new.start, new.end, new.hash, old.signature, old.words)  # same text
        if new.empty:
            if old is not None:
                out[cid] = old
            continue
        out[cid] = new
        if old is None:
            added.append(cid)
        elif new != old:
            refreshed.append(cid)
    return AnchorUpdate(out, tuple(added), tuple(refreshed), tuple(missing))


def drifted_ids(questions, anchors: dict[str, Anchor], index: ChunkIndex) -> frozenset:
    """Gold ids the index still holds under the same id but whose text hash no longer
    matches their anchor's: positional ids (``doc#0``) after a chunk-size change keep their
    names and move their text. Such a label points at other text, so a run treats the id
    as stale (kept out of the comparison) and `gold remap` offers it a new id. Needs a hash
    on both sides (an anchor's and the manifest's, given or computed from its text)."""
    if not anchors:
        return frozenset()
    chunks = index.chunks
    return frozenset(cid for cid in gold_ids(questions)
                     if cid in anchors and cid in chunks and not _same_text(anchors[cid], chunks[cid]))


def live_index_ids(index: ChunkIndex, drifted: frozenset) -> frozenset:
    """The index's ids a gold label may still point at: every id but the drifted ones."""
    return index.ids.difference(drifted) if drifted else index.ids
