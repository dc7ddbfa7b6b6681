"""One evaluation run, from a Config to an artefact dict: the shared path of `ci-eval run`,
`ci-eval demo` and `ci-eval action`."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from ci_eval import __version__
from ci_eval.core.artefact.results import STOP_AFTER, stopped_early
from ci_eval.errors import InputError, InputErrors


@dataclass(frozen=True)
class Inputs:
    config: object
    gold: object
    gold_sha256: str
    manifest: object  # core.manifest.ChunkIndex | None
    answers: dict | None  # gold id -> answer correct, from the end-to-end eval ([answers])
    # Gold ids still in the index whose text no longer matches their anchor (core/gold/anchors.py)
    drifted: frozenset = frozenset()
    # Where the verdicts came from and what the join could not use (the artefact's "answers")
    answers_record: dict | None = None

    @property
    def gold_index_ids(self):
        """The ids a gold label may point at (None: no index to check against): the
        manifest's, less the drifted ones, which are stale like the missing ones."""
        if self.manifest is None:
            return None
        from ci_eval.core.gold.anchors import live_index_ids

        return live_index_ids(self.manifest, self.drifted)


def load_inputs(config) -> Inputs:
    """Every input a run reads, checked before the retriever is called: the gold set, the
    manifest, the answers, and what the config says about them (protected ids and tags
    in the gold set, the command on PATH). Every problem at once, exit 2."""
    from ci_eval.core.gold.anchors import drifted_ids
    from ci_eval.core.gold.origin import with_origin_tags
    from ci_eval.inputs.answers import load_answers
    from ci_eval.inputs.loaders import load_gold_set, load_manifest
    from ci_eval.preflight import config_problems, resolved_gold
    from ci_eval.retrieval import worker

    worker.prestart(config)  # a python retriever's process boots while the rest is read
    try:
        gold, sha = load_gold_set(config.gold_set)
        gold = with_origin_tags(gold)  # the metric by origin, with nobody tagging
        problems = config_problems(config, gold)
        if problems:
            raise InputErrors(problems)
        manifest = load_manifest(config)
        gold = resolved_gold(config, gold, manifest)
        answers, record = (load_answers(config.answers, gold.questions, config.base_dir, config.source)
                           if config.answers else (None, None))
        drifted = drifted_ids(gold.questions, gold.anchors, manifest) if manifest is not None else frozenset()
    except BaseException:
        worker.discard_spare()
        raise
    return Inputs(config, gold, sha, manifest, answers, drifted, record)


def stop_when_all_fail_alike(stream, order: list[str], limit: int = STOP_AFTER):
    """Pass ``stream`` through; when its first ``limit`` results all failed with the same
    error, stop the runner and fail the questions left without asking (``STOPPED_EARLY``)."""
    first_error, alike, stream = None, 0, iter(stream)
    for position, (qid, result) in enumerate(stream, 1):
        yield qid, result
        if not result.failed or (first_error is not None and result.error != first_error):
            break  # one success or one different failure: never stop early
        first_error, alike = result.error, alike + 1
        if alike == limit and position < len(order):
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # the runner's own clean-up: threads drained, process stopped
            for rest in order[position:]:
                yield rest, stopped_early(limit)
            return
    yield from stream  # nothing left to watch: the rest passed on as they come


def retrieve(inputs: Inputs, progress=None, questions=None, cache=None):
    """Yield (question id, Retrieved) in gold-set order from the configured retriever, for
    ``questions`` (default: the whole gold set), through ``cache`` when one is given."""
    from ci_eval.retrieval.query import iter_queries

    queries = iter_queries(inputs.gold.questions if questions is None else questions)
    known = inputs.manifest.ids if inputs.manifest else None
    runner = runner_for(inputs.config.retriever.type)
    if cache is not None:
        stream = cache.around(queries, lambda misses: runner(inputs.config, misses, known))
    else:
        stream = runner(inputs.config, queries, known)
    stream = stop_when_all_fail_alike(iter(stream), [q.id for q in queries])
    if progress is None or not progress.enabled:
        yield from stream  # nothing drawn (--quiet, no questions): no count to keep
        return
    update = progress.update
    for qid, result in stream:
        update(1, result.error is not None)
        yield qid, result


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def run_stamp() -> str:
    """A run's ``created_at``: to the millisecond, since history orders runs by it and two
    runs of one branch can start within the same second."""
    now = _dt.datetime.now(_dt.timezone.utc)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def run_evaluation(inputs: Inputs, out, *, git=None, history=None, show_progress=True, shard=None,
                   cache_dir=None, judge=None, amend=None, repeat=None):
    """Run the retriever over the gold set (or ``shard`` of it) and stream the version 2
    artefact to ``out``, each row written as its question is measured. ``history`` is a
    list or a function called once the last row is written (the action's baseline lookup
    runs meanwhile); ``judge`` decides answer_correct (core.evaluation.evaluate_rows);
    ``amend(head)`` adjusts the keys known before the questions (the demo's notes);
    ``repeat`` (passes, 2 or more) asks the retriever again after the recorded pass,
    past the cache, and records how the answers changed (core/artefact/repeat.py)."""
    from ci_eval.core.artefact.evaluation import evaluate_rows
    from ci_eval.core.artefact.run_columns import RunColumns
    from ci_eval.inputs.artefact_out import RunWritten, write_rows
    from ci_eval.inputs.collector import collections_spaced
    from ci_eval.retrieval.progress import Progress
    from ci_eval.retrieval.sharding import open_cache, part_questions

    cfg = inputs.config
    positions, questions = part_questions(inputs.gold.questions, shard)
    cache = open_cache(inputs, cache_dir)
    head = run_head(inputs, git, shard, positions, questions)
    if amend is not None:
        amend(head)
    known = gold_bytes(inputs, questions, shard)
    refuse_oversized(inputs, head, known, shard, out)
    columns = RunColumns(cfg.metrics, cfg.abstain_below, cfg.k, cfg.retriever.depth)
    progress = Progress(len(questions), "retrieving", enabled=show_progress)
    collector = stage_collector(inputs)
    results = retrieve(inputs, progress, questions, cache)
    rows = evaluate_rows(
        inputs.gold,
        results if collector is None else collector.passing(results),
        k=cfg.k,
        metrics=cfg.metrics,
        relevance_level=cfg.relevance_level,
        index_ids=inputs.gold_index_ids,
        answers=inputs.answers,
        judge=judge,
        chunks=inputs.manifest.chunks if inputs.manifest is not None else None,
    )
    rows, repeated = repeating(inputs, questions, rows, repeat, show_progress)
    tail: dict = {}

    def end() -> dict:
        if repeated is not None:
            tail["repeat"] = repeated()
        carried = history() if callable(history) else history
        tail.update(summary=columns.summary(), history=list(carried or []))
        if collector is not None:
            tail.update(collector.result().recorded())
        if cache is not None:
            tail["cache"] = cache.record()
        return tail

    try:
        with collections_spaced():
            size = write_rows(out, head, rows, columns, end, len(questions),
                              probe=size_probe(inputs, head, questions, known, shard, out))
    finally:
        _closed(progress, cache)
    return RunWritten(str(out), {**head, **tail}, columns, size)


def _closed(progress, cache) -> None:
    """What a run closes however it ends: its bar, a worker booted for questions the cache
    answered (or none), and the cache, whose writer ended while the artefact was written
    (RetrievalCache.hand_over)."""
    from ci_eval.retrieval.worker import discard_spare

    progress.close()
    discard_spare()
    if cache is not None:
        cache.close()


def repeating(inputs: Inputs, questions, rows, passes, show_progress: bool):
    """``(rows, repeated)``: the recorded pass's rows, watched, and the function that asks
    the further passes once they are written and returns the ``repeat`` key; ``(rows,
    None)`` when the run is not repeated."""
    if passes is None:
        return rows, None
    from ci_eval.core.artefact.repeat import RepeatTally

    tally = RepeatTally(inputs.config.k, inputs.config.retriever.depth)

    def repeated() -> dict:
        repeat_passes(inputs, questions, tally, passes, show_progress)
        return tally.record()

    return tally.first(rows), repeated


def repeat_passes(inputs: Inputs, questions, tally, passes: int, show_progress: bool) -> None:
    """Passes 2 to ``passes`` of a repeated run, each handed to ``tally``: no cache (it
    would answer every pass alike), no judge and no stage records (only the ranking and
    its outcome are compared)."""
    from ci_eval.core.artefact.evaluation import evaluate_rows
    from ci_eval.retrieval.progress import Progress

    cfg = inputs.config
    for number in range(2, passes + 1):
        progress = Progress(len(questions), f"repeat pass {number}/{passes}", enabled=show_progress)
        try:
            tally.add_pass(evaluate_rows(inputs.gold, retrieve(inputs, progress, questions), k=cfg.k,
                                         metrics=cfg.metrics, relevance_level=cfg.relevance_level,
                                         index_ids=inputs.gold_index_ids))
        finally:
            progress.close()


# Retriever types whose answers can carry stages or calls (results.clean_staged, openinference).
_STAGED_TYPES = ("command", "python", "run-file")


def stage_collector(inputs: Inputs):
    """What records the run's stages and calls (core/artefact/stage_records.py), None when
    the config names no stages and the retriever type cannot answer with calls."""
    from ci_eval.core.artefact.stage_records import StageCollector

    cfg = inputs.config
    if not cfg.stages and cfg.retriever.type not in _STAGED_TYPES:
        return None

    def relevant() -> dict:
        index = inputs.gold_index_ids
        level = cfg.relevance_level
        return {q.id: [g for g, grade in q.gold if grade >= level and (index is None or g in index)]
                for q in inputs.gold.questions if not q.unanswerable}

    # chunk lengths are read by a stage's character budget only
    chars = chunk_lengths(inputs.manifest) if cfg.stages else None
    return StageCollector(cfg.stages, cfg.k, cfg.calls_budget, relevant, chars)


def chunk_lengths(manifest) -> dict | None:
    """Each chunk's length in characters (its text, else its span), None without a manifest."""
    if manifest is None:
        return None
    out = {}
    for c in manifest.chunks.values():
        if c.text is not None:
            out[c.id] = len(c.text)
        elif c.start is not None and c.end is not None:
            out[c.id] = c.end - c.start
    return out


def gold_bytes(inputs: Inputs, questions, shard) -> tuple[int, int]:
    """The gold set's fields of this run's rows and of the whole run's, as written
    (core/artefact/artefact_size.known_bytes): counted once, since the refusal before
    retrieval and the projection after the first rows both read them (without a shard,
    the run's rows are the whole run's)."""
    from ci_eval.core.artefact.artefact_size import known_bytes

    part = known_bytes(questions)
    return part, part if shard is None else known_bytes(inputs.gold.questions)


def refuse_oversized(inputs: Inputs, head: dict, known: tuple[int, int], shard, out) -> None:
    """Refuse, before the retriever is called, a run whose artefact the gold set alone puts
    over the size limit a later run reads as its baseline (loaders.MAX_ARTEFACT_BYTES, as it
    is now): no depth can help it. A shard is held to the merged artefact of the whole run
    too, which is as large as the unsharded run's: sharding spreads the retrieval, never the
    artefact's size. ``known``: ``gold_bytes``. The rest is projected from the first rows
    (``size_probe``)."""
    from ci_eval.core.artefact.artefact_size import head_bytes
    from ci_eval.inputs import loaders

    limit = loaders.MAX_ARTEFACT_BYTES
    part, whole = known
    own = head_bytes(head)
    floor = max(own + part, (own if shard is None else head_bytes(_whole_head(head))) + whole)
    if floor <= limit:
        return
    raise InputError(
        f"the run artefact would be over {floor:,} bytes from the gold set's {len(inputs.gold.questions):,} "
        f"questions alone (their text, tags and gold), over the {limit:,}-byte limit a later run reads as its "
        "baseline: refused before the retriever is called; measure fewer questions (shards would not help: "
        "their merged artefact is as large)", str(out))


def _whole_head(head: dict) -> dict:
    """A shard's head as the merged artefact's: without its ``shard`` key."""
    return {key: value for key, value in head.items() if key != "shard"}


def size_probe(inputs: Inputs, head: dict, questions, known: tuple[int, int], shard, out):
    """``(after, known, check)`` for ``write_rows``: once the first rows are written, ``check``
    projects the artefact's size from them (the gold set's part of every row counted exactly,
    ``known``: ``gold_bytes``) and stops a run on course past the limit, with a
    depth those rows' rankings say fits (or fewer questions). None for a whole run too small
    for a projection (the write's own check holds it)."""
    from ci_eval.core.artefact.artefact_size import head_bytes, known_bytes, probe_rows
    from ci_eval.inputs import loaders

    cfg, total = inputs.config, len(inputs.gold.questions)
    part, whole = known
    whole_head = None if shard is None else head_bytes(_whole_head(head))
    # A small part is projected at its last row: what it says of the merged artefact
    # still comes before the other parts are run.
    after = probe_rows(len(questions)) or (len(questions) if shard is not None else None)
    if not after:
        return None

    def check(probe) -> None:
        limit = loaders.MAX_ARTEFACT_BYTES
        projected = max(probe.projected(len(questions), part), probe.projected(total, whole, whole_head))
        if projected <= limit:
            return
        fits = probe.depth_that_fits(total, whole, cfg.retriever.depth, 3 * cfg.k, limit, whole_head)
        advice = (f"set [retriever] depth = {fits} or less" if fits is not None else
                  f"measure fewer questions or a smaller k (depth {3 * cfg.k} is the least it allows)")
        merged = "" if shard is None else f" (merged: {total:,} questions)"
        raise InputError(
            f"the run artefact is on course for {projected:,} bytes{merged} at the size of its first "
            f"{probe.rows:,} rows, over the {limit:,}-byte limit a later run reads as its baseline: stopped "
            f"after {probe.rows:,} of {len(questions):,} questions; {advice} (shards would not help: their "
            "merged artefact is as large)", str(out))

    return after, lambda rows: known_bytes(questions[:rows]), check


def run_head(inputs: Inputs, git, shard, positions, questions) -> dict:
    """The artefact's keys known before the first question is asked."""
    from ci_eval.core.artefact.artefact import artefact_head

    cfg, manifest = inputs.config, inputs.manifest
    recorded = cfg.as_recorded()
    head = artefact_head(
        tool_version=__version__,
        created_at=run_stamp(),
        git=git,
        config=recorded,
        gold_set={
            "path": cfg.gold_set_as_written,
            "sha256": inputs.gold_sha256,
            "index_version": inputs.gold.index_version,
            "questions": len(inputs.gold.questions),
            **recorded_remap_of(inputs.gold),
            **_span_gold(inputs.gold),
        },
        index={
            "version": manifest.version if manifest else None,
            "ids": len(manifest.ids) if manifest else None,
            "checked": manifest is not None,
            **({"drifted": sorted(inputs.drifted)} if inputs.drifted else {}),
            **_mean_chars(manifest),
            **remap_of(inputs),
        },
        k=cfg.k,
        metrics=cfg.metrics,
        abstain_below=cfg.abstain_below,
    )
    if inputs.answers_record is not None:
        head["answers"] = inputs.answers_record
    if shard is not None:
        from ci_eval.core.artefact.shard import shard_record

        head["shard"] = shard_record(shard, positions, [q.id for q in questions], gold_sha256=inputs.gold_sha256,
                                     config=recorded, index_version=manifest.version if manifest else None)
    return head


def _span_gold(gold) -> dict:
    """``{"evidence": n}``: how many questions name evidence by document span or quote (a
    comparison of two runs of the same gold-set file then compares them across a re-chunk);
    else ``{}``."""
    from ci_eval.core.gold.evidence import STALE_PREFIX

    n = sum(bool(q.evidence) or any(g.startswith(STALE_PREFIX) for g, _ in q.gold) for q in gold.questions)
    return {"evidence": n} if n else {}


def _mean_chars(manifest) -> dict:
    """``{"mean_chars": ...}`` when the manifest gives every chunk's length, else ``{}``."""
    mean = manifest.mean_chars() if manifest is not None else None
    cuts = manifest.cuts() if manifest is not None else None
    return ({"mean_chars": mean} if mean is not None else {}) | ({"cuts": cuts} if cuts else {})


def recorded_remap_of(gold) -> dict:
    """``{"remap": ...}``: the gold set's last applied remap (core/gold/remap_record.py), so a
    comparison can tell its translated gold from a person's relabel; else ``{}``."""
    from ci_eval.core.gold.remap_record import latest_remap

    found = latest_remap(gold.provenance)
    return {"remap": found} if found is not None else {}


def remap_of(inputs: Inputs) -> dict:
    """``{"remap": ...}`` when some gold ids are stale and the gold set has anchors to map
    them back with (what `ci-eval gold remap` would do), else ``{}``."""
    gold, manifest = inputs.gold, inputs.manifest
    if manifest is None or not gold.anchors:
        return {}
    from ci_eval.core.gold.remap import plan_remap, remap_summary

    plan = plan_remap(gold, gold.anchors, manifest)
    return {"remap": remap_summary(plan)} if plan.mappings else {}


def retriever_failed(written) -> str | None:
    """A retriever that failed on every question, answerable or not, is a broken
    retriever, not a regression: name it so the exit code can say so."""
    columns = written.columns
    errors = columns.errors
    if columns.asked and errors.count == columns.asked:
        return f"the retriever failed on all {errors.count} questions; first error: {errors.first[1]}"
    return None


__all__ = ["Inputs", "load_inputs", "refuse_oversized", "remap_of", "retriever_failed", "run_evaluation"]


def runner_for(retriever_type: str):
    """The runner of a type (retrieval/query.py's ``Runner``). The python and framework
    types run the user's code in a worker process watched from here (retrieval/worker.py),
    so that it cannot hold this one."""
    import importlib

    from ci_eval.retrieval import worker
    from ci_eval.retrieval.registry import IN_WORKER, RUNNER_MODULES

    if retriever_type in IN_WORKER:
        return worker.runner
    return importlib.import_module(RUNNER_MODULES[retriever_type]).runner
