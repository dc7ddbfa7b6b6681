"""``ci-eval gold anchor`` and ``ci-eval gold remap``: load, call the core, write."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.gold.anchors import AnchorUpdate, update_anchors
from ci_eval.core.gold.manifest import ChunkIndex
from ci_eval.core.gold.remap import DEFAULT_THRESHOLD, RemapPlan, apply_plan, misfit, plan_remap
from ci_eval.errors import UsageError
from ci_eval.gold.store import read_gold, write_gold


@dataclass(frozen=True)
class Targets:
    gold_path: str
    index: object  # core.manifest.ChunkIndex


def resolve(config_path: str | None, gold_path: str | None, manifest_path: str | None) -> Targets:
    """The gold set and index the command works on: flags first, then the configuration."""
    from ci_eval.inputs.loaders import load_config, load_manifest
    from ci_eval.inputs.manifest import read_manifest

    config = load_config(config_path) if not (gold_path and manifest_path) else None
    gold_path = gold_path or config.gold_set
    if manifest_path:
        index = read_manifest(manifest_path, config.index_version if config else None)
    else:
        index = load_manifest(config)
        if index is None:
            raise UsageError("no index manifest: pass --manifest FILE or configure [index] "
                             "manifest or callable", config.source)
    return Targets(gold_path, index)


def anchor(targets: Targets) -> AnchorUpdate:
    """Record the fingerprint of every gold id the index holds; rewrite only on a change."""
    document, gold = read_gold(targets.gold_path)
    update = update_anchors(gold.questions, gold.anchors, targets.index)
    if update.added or update.refreshed:
        out = dict(document, schema_version=2,
                   anchors={cid: a.as_json() for cid, a in sorted(update.anchors.items())})
        write_gold(targets.gold_path, out)
    return update


def with_version(index: ChunkIndex, to_version: str | None) -> ChunkIndex:
    """The index under the version ``--to-version`` names (a manifest that gives another
    one is refused: one of the two is wrong)."""
    if to_version is None:
        return index
    if index.version is not None and index.version != to_version:
        raise UsageError(f"--to-version {to_version!r}, but the manifest says version {index.version!r}",
                         index.source)
    return ChunkIndex(to_version, index.chunks, index.source)


def remap(targets: Targets, *, write: bool, accept_proposals: bool, record: dict,
          threshold: float = DEFAULT_THRESHOLD, to_version: str | None = None) -> RemapPlan:
    """The remap plan for the gold set's stale ids; with ``write``, the gold set rewritten.
    An index the gold set does not fit is refused before anything is planned."""
    document, gold = read_gold(targets.gold_path)
    index = with_version(targets.index, to_version)
    problem = misfit(gold, index)
    if problem:
        raise UsageError(problem, index.source)
    targets = Targets(targets.gold_path, index)
    plan = plan_remap(gold, gold.anchors, targets.index, threshold)
    if write and plan.applied(accept_proposals):
        write_gold(targets.gold_path, apply_plan(document, plan, targets.index,
                                                 accept_proposals=accept_proposals, record=record))
    return plan


def record(by: str | None) -> dict:
    """Who and when, for the provenance of a rewrite."""
    import getpass
    import os

    from ci_eval.retrieval.pipeline import now_utc

    if not by:
        try:
            by = os.environ.get("GITHUB_ACTOR") or getpass.getuser()
        except (KeyError, OSError):  # no login name in a bare container
            by = "unknown"
    return {"by": by, "at": now_utc()}
