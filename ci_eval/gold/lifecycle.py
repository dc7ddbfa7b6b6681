"""``ci-eval gold anchor`` and ``ci-eval gold remap``: load, call the core, write."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.gold.anchors import update_anchors
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


def anchor(targets: Targets, to_spans: bool = False):
    """Record the fingerprint of every gold id the index holds; rewrite only on a change.
    ``to_spans``: first turn each gold id the index places in a document into a span of it
    (core/gold/span_conversion.py). Returns the AnchorUpdate, the Conversion (None without
    ``to_spans``) and the converted questions whose span gold resolves, on this index, to
    other judgements than their ids gave (chunks overlapping by half or more)."""
    document, gold = read_gold(targets.gold_path)
    conversion, widened, questions = None, [], gold.questions
    if to_spans:
        from ci_eval.core.gold.evidence import resolve as resolve_evidence
        from ci_eval.core.gold.goldset import parse_gold_set
        from ci_eval.core.gold.span_conversion import to_spans as convert
        from ci_eval.core.gold.span_conversion import widened as widened_questions

        conversion = convert(document, targets.index)
        document = conversion.document
        converted = parse_gold_set(document, targets.gold_path)
        questions = converted.questions
        widened = widened_questions(gold, resolve_evidence(converted, targets.index, targets.gold_path).gold)
    update = update_anchors(questions, gold.anchors, targets.index)
    if update.added or update.refreshed or (conversion is not None and conversion.converted):
        out = dict(document)
        if update.anchors:
            out.update(schema_version=max(2, out["schema_version"]),
                       anchors={cid: a.as_json() for cid, a in sorted(update.anchors.items())})
        write_gold(targets.gold_path, out)
    return update, conversion, widened


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
