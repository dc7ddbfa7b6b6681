"""One evaluation run, from a Config to an artefact dict: the shared path of `ci-eval run`,
`ci-eval demo` and `ci-eval action`."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from ci_eval import __version__


@dataclass(frozen=True)
class Inputs:
    config: object
    gold: object
    gold_sha256: str
    manifest: object  # core.manifest.ChunkIndex | None
    answers: dict | None


def load_inputs(config) -> Inputs:
    from ci_eval.inputs.loaders import load_answers, load_gold_set, load_manifest

    gold, sha = load_gold_set(config.gold_set)
    manifest = load_manifest(config)
    answers = load_answers(config.answers, {q.id for q in gold.questions}) if config.answers else None
    return Inputs(config, gold, sha, manifest, answers)


def retrieve(inputs: Inputs, progress=None, questions=None, cache=None):
    """Yield (question id, Retrieved) in gold-set order from the configured retriever, for
    ``questions`` (default: the whole gold set), through ``cache`` when one is given."""
    from ci_eval.retrieval.query import iter_queries, runner_for

    queries = iter_queries(inputs.gold.questions if questions is None else questions)
    known = inputs.manifest.ids if inputs.manifest else None
    runner = runner_for(inputs.config.retriever.type)
    if cache is not None:
        stream = cache.around(queries, lambda misses: runner(inputs.config, misses, known))
    else:
        stream = runner(inputs.config, queries, known)
    for qid, result in stream:
        if progress is not None:
            progress.update(1, failed=result.failed)
        yield qid, result


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def run_evaluation(inputs: Inputs, *, git=None, history=None, created_at=None, show_progress=True,
                   answers_override=None, shard=None, cache_dir=None) -> dict:
    from ci_eval.core.artefact import build_artefact
    from ci_eval.core.evaluation import evaluate
    from ci_eval.retrieval.progress import Progress
    from ci_eval.retrieval.sharding import open_cache, part_questions, record_part

    cfg = inputs.config
    positions, questions = part_questions(inputs.gold.questions, shard)
    cache = open_cache(inputs, cache_dir)
    progress = Progress(len(questions), "retrieving", enabled=show_progress)
    try:
        evaluation = evaluate(
            inputs.gold,
            retrieve(inputs, progress, questions, cache),
            k=cfg.k,
            metrics=cfg.metrics,
            relevance_level=cfg.relevance_level,
            index_ids=inputs.manifest.ids if inputs.manifest else None,
            abstain_below=cfg.abstain_below,
            answers=answers_override if answers_override is not None else inputs.answers,
        )
    finally:
        progress.close()
    manifest = inputs.manifest
    artefact = build_artefact(
        tool_version=__version__,
        created_at=created_at or now_utc(),
        git=git,
        config=cfg.as_recorded(),
        gold_set={
            "path": cfg.raw.get("gold_set"),
            "sha256": inputs.gold_sha256,
            "index_version": inputs.gold.index_version,
            "questions": len(inputs.gold.questions),
        },
        index={
            "version": manifest.version if manifest else None,
            "ids": len(manifest.ids) if manifest else None,
            "checked": manifest is not None,
            **remap_of(inputs),
        },
        k=cfg.k,
        metrics=cfg.metrics,
        abstain_below=cfg.abstain_below,
        evaluation=evaluation,
        history=history,
    )
    return record_part(artefact, inputs, shard, positions, cache)


def remap_of(inputs: Inputs) -> dict:
    """``{"remap": ...}`` when some gold ids are stale and the gold set has anchors to map
    them back with (what `ci-eval gold remap` would do), else ``{}``."""
    from ci_eval.core.remap import plan_remap, remap_summary

    gold, manifest = inputs.gold, inputs.manifest
    if manifest is None or not gold.anchors:
        return {}
    plan = plan_remap(gold, gold.anchors, manifest)
    return {"remap": remap_summary(plan)} if plan.mappings else {}


def retriever_failed(artefact: dict) -> str | None:
    """A retriever that failed on every answerable question is a broken retriever, not a
    regression: name it so the exit code can say so."""
    measured = [q for q in artefact["questions"] if q["status"] in ("ok", "error")]
    errors = [q for q in measured if q["status"] == "error"]
    if measured and len(errors) == len(measured):
        return f"the retriever failed on all {len(errors)} questions; first error: {errors[0]['error']}"
    return None


__all__ = ["Inputs", "load_inputs", "remap_of", "retriever_failed", "run_evaluation"]
