"""Remapping stale gold ids onto a re-ingested index, from the anchors the gold set keeps.

For each gold id missing from the new index, the rules are tried in order of certainty:

1. ``hash``: one new chunk has the anchor's text hash -> automatic (the chunk moved or was
   renamed). Several do (duplicated text) -> a proposal, since any one would be a guess.
   When the text is only found in other documents while the anchor's own document is still
   in the index, the span rule is tried first: that is a copy, not the chunk.
2. ``span``: new chunks of the anchor's document overlap its old span; a chunk counts when
   at least half of it lies inside the old span (a piece of a split) or when it holds at
   least half of the old span (a merge, or a shifted boundary). When those chunks cover at
   least half of the old span -> automatic, one-to-many for a split (each new id gets the
   old grade), and when several old ids land on one new id the question keeps the highest
   grade.
3. ``similar``: the candidate with the closest text signature (MinHash of word shingles)
   among the new chunks of the same document, or of the whole index when the document is
   gone, scores at least ``threshold`` -> a proposal with its score.
4. otherwise unresolved: the id stays stale.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ci_eval.core.anchors import Anchor, anchor_for, gold_ids
from ci_eval.core.fingerprint import decode_signature, signature_slots, similarity
from ci_eval.core.manifest import Chunk, ChunkIndex
from ci_eval.core.remap_record import applied_mappings

AUTOMATIC, PROPOSED, UNRESOLVED = "automatic", "proposed", "unresolved"
DEFAULT_THRESHOLD = 0.5
# LSH over the whole index when a document is gone: 16 bands of 4 slots finds a pair whose
# similarity is 0.5 with probability 1 - (1 - 0.5**4)**16 = 0.64, and 0.7 with 0.98.
_BANDS, _ROWS = 16, 4


@dataclass(frozen=True)
class Mapping:
    old: str
    new: tuple[str, ...]
    kind: str  # AUTOMATIC, PROPOSED or UNRESOLVED
    how: str  # "hash", "span", "similar", or why unresolved
    confidence: float  # 1.0 for a hash; the covered share for a span; the similarity score


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
    thousand hashes and documents in an index of millions), and the signatures of the new
    chunks, computed once and only for chunks looked at."""

    def __init__(self, index: ChunkIndex, anchors: list[Anchor]):
        self.index = index
        self.by_hash = index.with_hashes({a.hash for a in anchors if a.hash})
        self.by_doc = index.of_docs({a.doc for a in anchors if a.doc is not None})
        self._slots: dict[str, object] = {}
        self._bands: dict | None = None

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


def _by_hash(old: Anchor, ev: _Evidence) -> Mapping | None:
    same = ev.by_hash.get(old.hash) if old.hash else None
    if not same:
        return None
    if len(same) > 1 and old.doc is not None:
        in_doc = [c for c in same if ev.index.chunks[c].doc == old.doc]
        same = in_doc or same
    if len(same) == 1:
        return Mapping("", (same[0],), AUTOMATIC, "hash", 1.0)
    return Mapping("", tuple(sorted(same)), PROPOSED, "hash", 1.0 / len(same))


def _by_span(old: Anchor, ev: _Evidence) -> Mapping | None:
    if not old.has_span or old.end <= old.start:
        return None
    length = old.end - old.start
    targets, covered = [], 0
    for c in ev.by_doc.get(old.doc, ()):
        if c.start is None or c.end is None:
            continue
        overlap = min(old.end, c.end) - max(old.start, c.start)
        if overlap <= 0:
            continue
        if 2 * overlap >= c.end - c.start or 2 * overlap >= length:
            targets.append(c.id)
            covered += overlap
    if targets and 2 * covered >= length:
        return Mapping("", tuple(targets), AUTOMATIC, "span", covered / length)
    return None


def _by_similarity(old: Anchor, ev: _Evidence, threshold: float) -> Mapping | None:
    slots = decode_signature(old.signature) if old.signature else None
    if slots is None:
        return None
    doc_chunks = ev.by_doc.get(old.doc) if old.doc is not None else None
    candidates = [c.id for c in doc_chunks] if doc_chunks else sorted(ev.near(slots))
    best, best_id = -1.0, None
    for cid in candidates:
        theirs = ev.of(ev.index.chunks[cid])
        if theirs is not None:
            score = similarity(slots, theirs)
            if score > best:
                best, best_id = score, cid
    if best_id is not None and best >= threshold:
        return Mapping("", (best_id,), PROPOSED, "similar", best)
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
            found = _by_span(old, ev) or found
        found = found or _by_span(old, ev) or _by_similarity(old, ev, threshold)
    if found is None:
        return Mapping(cid, (), UNRESOLVED, _why_unresolved(old, ev), 0.0)
    return Mapping(cid, found.new, found.kind, found.how, found.confidence)


def plan_remap(gold, anchors: dict[str, Anchor], index: ChunkIndex,
               threshold: float = DEFAULT_THRESHOLD) -> RemapPlan:
    """One Mapping for every gold id of ``gold`` (a GoldSet) that ``index`` no longer holds."""
    stale = [cid for cid in gold_ids(gold.questions) if cid not in index.chunks]
    ev = _Evidence(index, [anchors[c] for c in stale if c in anchors])
    mappings = tuple(_remap_one(cid, anchors.get(cid), ev, threshold) for cid in stale)
    return RemapPlan(mappings, gold.index_version, index.version)


def _remapped_gold(raw_gold, mapping: dict[str, tuple[str, ...]]):
    """A question's ``gold`` with mapped ids replaced: binary stays a list, graded keeps the
    highest grade where several old ids meet on one new id."""
    if isinstance(raw_gold, list):
        out: dict[str, None] = {}
        for cid in raw_gold:
            for new in mapping.get(cid, (cid,)):
                out.setdefault(new, None)
        return list(out)
    graded: dict[str, int] = {}
    for cid, grade in raw_gold.items():
        for new in mapping.get(cid, (cid,)):
            graded[new] = max(grade, graded.get(new, grade))
    return graded


def apply_plan(document: dict, plan: RemapPlan, index: ChunkIndex, *, accept_proposals: bool,
               record: dict) -> dict:
    """The gold-set document rewritten by the plan (a new dict; ``document`` is untouched):
    mapped ids replaced, their anchors moved to the new ids, ``index_version`` set to the
    new index's, and ``record`` (who, when) completed with the counts and each applied
    old -> new id with its rule (core/remap_record.py) and appended to ``provenance.remaps``."""
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
    return f"{table}\n{tail}"


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
