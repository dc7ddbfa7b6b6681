"""Id gold turned into span gold: each gold chunk id the index places in a document becomes
a piece of evidence over that chunk's span, at its grade (``ci-eval gold anchor --to-spans``).

On the index it was made from, the converted gold resolves to the same chunk judgements
(core/gold/evidence.py): a chunk covers all of its own span, and a neighbour overlapping it
by less than half of either covers none of it. Chunks overlapping by half or more would
each cover the other's span, so their judgements could widen (``widened`` finds them).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Conversion:
    document: dict  # the gold-set document with the converted questions
    converted: int  # gold ids turned into spans
    kept: int  # gold ids left as ids: not in the index, or without a span there
    questions: int  # questions that changed


def _pairs(gold) -> list[tuple[str, int]]:
    return [(g, 1) for g in gold] if isinstance(gold, list) else list(gold.items())


def _question(raw: dict, chunks: dict) -> tuple[dict, int, int]:
    evidence = list(raw.get("evidence") or [])
    have = {(e.get("doc"), e.get("start"), e.get("end")) for e in evidence}
    kept, converted = [], 0
    for cid, grade in _pairs(raw.get("gold") or []):
        c = chunks.get(cid)
        if c is None or not c.has_span or c.end is None:
            kept.append((cid, grade))
            continue
        converted += 1
        if (c.doc, c.start, c.end) not in have:
            have.add((c.doc, c.start, c.end))
            evidence.append({"doc": c.doc, "start": c.start, "end": c.end, "grade": grade})
    if not converted:
        return raw, 0, len(kept)
    gold = ([cid for cid, _ in kept] if isinstance(raw.get("gold"), list) else dict(kept))
    return {**raw, "gold": gold, "evidence": evidence}, converted, len(kept)


def to_spans(document: dict, index) -> Conversion:
    """``document`` (a valid gold-set document) with its id gold converted where ``index``
    (core.gold.manifest.ChunkIndex) gives the chunk's document and span; the rest as it was."""
    questions, converted, kept, changed = [], 0, 0, 0
    for raw in document.get("questions") or []:
        new, n, left = _question(raw, index.chunks)
        questions.append(new)
        converted, kept, changed = converted + n, kept + left, changed + (new is not raw)
    return Conversion({**document, "questions": questions}, converted, kept, changed)


def widened(before, after) -> list[str]:
    """Ids of the questions whose relevant judgements differ between ``before`` (the id gold
    set) and ``after`` (its conversion resolved on the same index), both
    core.gold.goldset.GoldSet. Grade 0 is left out: resolving evidence also judges the other
    chunks of the documents it names not relevant, which widens nothing."""
    old = {q.id: _relevant(q.gold) for q in before.questions}
    return [q.id for q in after.questions if _relevant(q.gold) != old.get(q.id)]


def _relevant(gold) -> dict:
    return {cid: grade for cid, grade in gold if grade > 0}
