"""What a gold remap leaves behind for a later comparison: each old -> new id it applied
and the rule that applied it, recorded in the gold set's provenance by ``gold remap
--write``, carried into a run's artefact, and read back by the diff, which then compares a
question whose gold changed only by that remap instead of calling it relabelled."""

from __future__ import annotations

from dataclasses import dataclass

# The rule of an applied mapping: found by the remap alone, or a proposal a person took.
AUTOMATIC_RULE, ACCEPTED_RULE = "automatic", "accepted proposal"


def applied_mappings(plan, accept_proposals: bool) -> dict[str, dict]:
    """The ``mappings`` of a remap's provenance record: old id -> its new ids and rule, for
    every mapping the rewrite applied (``RemapPlan.applied``), in the plan's order."""
    applied = plan.applied(accept_proposals)
    return {m.old: {"new": list(m.new), "rule": AUTOMATIC_RULE if m.kind == "automatic" else ACCEPTED_RULE}
            for m in plan.mappings if m.old in applied}


def latest_remap(provenance: dict | None) -> dict | None:
    """What a run artefact's ``gold_set.remap`` records: the gold set's last remap that
    names its mappings (older records only counted them), or None. Only the last one: the
    ids of an earlier index may be reused by a later one, so remaps are not composed."""
    for entry in reversed((provenance or {}).get("remaps") or ()):
        if isinstance(entry, dict) and isinstance(entry.get("mappings"), dict):
            return {"from_index_version": entry.get("from_index_version"),
                    "to_index_version": entry.get("to_index_version"),
                    "mappings": entry["mappings"]}
    return None


@dataclass(frozen=True)
class RecordedRemap:
    """A recorded remap as the diff reads it: old id -> new ids, and the old ids a person
    accepted as proposals."""

    from_version: str | None
    to_version: str | None
    to: dict[str, tuple[str, ...]]
    accepted: frozenset[str]

    def translated(self, gold) -> dict[str, float]:
        """``gold`` ((id, grade) pairs) with each mapped id replaced by its new ids, as
        ``gold remap`` rewrites it: where several old ids meet on one new id, the highest
        grade."""
        out: dict[str, float] = {}
        for cid, grade in gold:
            for new in self.to.get(cid, (cid,)):
                out[new] = max(grade, out.get(new, grade))
        return out

    def used(self, gold) -> tuple[bool, frozenset[str]]:
        """Whether ``gold`` names a mapped id, and those of them a person accepted as proposals."""
        named = {cid for cid, _ in gold if cid in self.to}
        return bool(named), frozenset(named & self.accepted)


def read_recorded_remap(raw) -> RecordedRemap | None:
    """An artefact's ``gold_set.remap`` (schema-checked), or None when absent."""
    if not isinstance(raw, dict) or not isinstance(raw.get("mappings"), dict):
        return None
    mappings = raw["mappings"]
    return RecordedRemap(raw.get("from_index_version"), raw.get("to_index_version"),
                         {old: tuple(m.get("new") or ()) for old, m in mappings.items()},
                         frozenset(old for old, m in mappings.items() if m.get("rule") == ACCEPTED_RULE))
