"""The parts of a sharded run -> the artefact one unsharded run would have written.

Strict on purpose: a merge that goes green with a shard missing, or that mixes parts of two
runs, reports a number nobody measured. Every summary figure (means, per-tag means, stale
and unanswerable counts, latency percentiles) is recomputed from the per-question rows by
the same core/artefact/run_columns.py the run feeds; nothing per-shard is averaged.

The parts are checked from their top-level keys and question ids alone (``Part``); the
rows then stream through in gold-set order, one per part held at a time.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ci_eval.core.artefact.run_head import RunHead, ShardRecord
from ci_eval.core.artefact.shard import config_sha256, shard_of
from ci_eval.errors import InputError

# What every part of one run must hold identically (the shard record checks the rest).
_SAME = ("tool", "git", "config", "gold_set", "index", "k", "metrics", "abstain_below", "history", "answers")
_IDENTITY = ("gold_sha256", "config_sha256", "index_version")


@dataclass(frozen=True)
class Part:
    """One part as the checks see it: where it came from, its typed head (every top-level
    key but the rows) and its question ids in order."""

    source: str
    head: RunHead
    ids: list


def _record(part: Part) -> ShardRecord:
    shard, head, source = part.head.shard, part.head, part.source
    if shard is None:
        raise InputError("is not a shard part (write parts with `ci-eval run --shard I/N`)", source)
    if shard.ids != part.ids or len(shard.positions) != len(part.ids):
        raise InputError("the part's questions do not match its shard record", source, "shard.ids")
    if shard.index > shard.count:
        raise InputError(f"shard {shard.label} is not a shard", source, "shard.index")
    if shard.config_sha256 != config_sha256(head.config):
        raise InputError("the part's config does not match its config_sha256", source, "shard.config_sha256")
    if shard.gold_sha256 != head.gold_sha256:
        raise InputError("the part's gold set does not match its gold_sha256", source, "shard.gold_sha256")
    return shard


def _check_assignment(parts: list[Part], records: list[ShardRecord]) -> None:
    """Each question sits in the shard its id hashes to: a part cut by another rule (or
    edited) could hide a question from every part."""
    for part, record in zip(parts, records):
        stray = next((i for i in record.ids if shard_of(i, record.count) != record.index), None)
        if stray is not None:
            raise InputError(f"question {stray!r} does not belong to shard {record.label}",
                             part.source, "shard.ids")


def _check_same_run(parts: list[Part], records: list[ShardRecord]) -> None:
    first, first_record = parts[0], records[0]
    for part, record in zip(parts[1:], records[1:]):
        if record.count != first_record.count:
            raise InputError(f"is shard {record.label}, but {first.source} is one of "
                             f"{first_record.count}", part.source, "shard.count")
        for key in _IDENTITY:
            mine, theirs = getattr(record, key), getattr(first_record, key)
            if mine != theirs:
                what = key.replace("_sha256", "").replace("_", " ")
                raise InputError(f"comes from a different {what} than {first.source} "
                                 f"({mine!r} vs {theirs!r})", part.source, f"shard.{key}")
        for key in _SAME:
            if getattr(part.head, key) != getattr(first.head, key):
                raise InputError(f"differs from {first.source} in {key!r}: parts of one run only",
                                 part.source, key)


def _check_complete(parts: list[Part], records: list[ShardRecord]) -> None:
    by_index: dict[int, str] = {}
    owner: dict[str, str] = {}
    for part, record in zip(parts, records):
        if record.index in by_index:
            raise InputError(f"shard {record.label} is given twice (also {by_index[record.index]})", part.source)
        by_index[record.index] = part.source
        for qid in record.ids:
            if qid in owner:
                raise InputError(f"question {qid!r} is also in {owner[qid]}", part.source, "shard.ids")
            owner[qid] = part.source
    count = records[0].count
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        listed = ", ".join(f"{i}/{count}" for i in missing)
        given = ", ".join(part.source for part in parts)
        raise InputError(f"shard{'s' if len(missing) > 1 else ''} {listed} "
                         f"{'are' if len(missing) > 1 else 'is'} missing: the merge needs all {count} "
                         f"parts of the run, got {len(by_index)} ({given})")
    expected = parts[0].head.gold_questions
    positions = sorted(p for r in records for p in r.positions)
    if positions != list(range(len(positions))) or (expected is not None and len(positions) != expected):
        raise InputError(f"the parts hold {len(positions)} questions at positions that do not cover the "
                         f"gold set's {expected}", parts[0].source, "shard.positions")


def _merged_cache(parts: list[Part]) -> dict | None:
    used = [p.head.cache for p in parts if p.head.cache is not None]
    if not used:
        return None
    return {"hits": sum(hits for hits, _ in used), "misses": sum(misses for _, misses in used)}


def _merged_records(parts: list[Part], key: str) -> dict | None:
    """A sharded run's ``stages`` or ``calls`` record: every part's questions in gold-set
    order, under the chain (or budget) they all share. Without it a merged run would lose
    what each stage held and its ``stage_min`` floor would fail closed."""
    used = [p for p in parts if getattr(p.head, key)]
    if not used:
        return None
    first = getattr(used[0].head, key)
    shared = {name: value for name, value in first.items() if name != "questions"}
    for part in used[1:]:
        if {n: v for n, v in getattr(part.head, key).items() if n != "questions"} != shared:
            raise InputError(f"records other {key} than {used[0].source}: parts of one run only",
                             part.source, key)
    position = {qid: pos for p in parts for qid, pos in zip(p.head.shard.ids, p.head.shard.positions)}
    questions = sorted(((qid, record) for p in used for qid, record in getattr(p.head, key)["questions"].items()),
                       key=lambda pair: position[pair[0]])
    return {**shared, "questions": dict(questions)}


def _merged_repeat(parts: list[Part]) -> dict | None:
    """A sharded run's ``repeat`` record (``run --repeat``): the parts' counts added, their
    changed questions in gold-set order. Parts repeated a different number of times, or
    some not at all, are not one run."""
    from ci_eval.core.artefact.repeat import MAX_CHANGED_IDS

    used = [p for p in parts if p.head.repeat is not None]
    if not used:
        return None
    odd = next((p for p in parts if p.head.repeat is None or p.head.repeat.passes != used[0].head.repeat.passes), None)
    if odd is not None:
        raise InputError(f"was not repeated as {used[0].source} was (run --repeat): parts of one run only",
                         odd.source, "repeat")
    position = {qid: pos for p in parts for qid, pos in zip(p.head.shard.ids, p.head.shard.positions)}
    flapping = sorted((entry for p in used for entry in p.head.repeat.flapping), key=lambda e: position[e[0]])
    out = {"passes": used[0].head.repeat.passes, "questions": sum(p.head.repeat.questions for p in used),
           "changed": sum(p.head.repeat.changed for p in used),
           "flapping": [list(entry) for entry in flapping[:MAX_CHANGED_IDS]]}
    failed = [p.head.repeat.failed for p in used if p.head.repeat.failed is not None]
    if failed:
        first = min(failed, key=lambda f: position[f[1]])
        out["failed"] = {"questions": sum(f[0] for f in failed), "first": list(first[1:])}
    return out


def check_parts(parts: list[Part]) -> list[ShardRecord]:
    """Refuse parts that are not all of one run; their shard records, in the parts' order."""
    if not parts:
        raise InputError("no parts to merge", "merge")
    records = [_record(p) for p in parts]
    _check_same_run(parts, records)
    _check_complete(parts, records)
    _check_assignment(parts, records)
    for part, record in zip(parts, records):
        positions = record.positions
        if any(a >= b for a, b in zip(positions, positions[1:])):
            # A run writes its questions in gold-set order; the merge streams on that.
            raise InputError("the part's positions are not in gold-set order", part.source, "shard.positions")
    return records


def merged_head(parts: list[Part]) -> dict:
    """The merged artefact's keys known before its rows (no shard record: it is whole)."""
    from ci_eval.core.artefact.artefact import artefact_head

    first = parts[0].head
    head = artefact_head(
        tool_version=first.tool_version,
        created_at=max(p.head.created_at for p in parts),
        git=first.git,
        config=first.config,
        gold_set=first.gold_set,
        index=first.index,
        k=first.k,
        metrics=first.metrics,
        abstain_below=first.abstain_below,
    )
    if first.answers is not None:  # every part joined the same verdicts to the whole gold set
        head["answers"] = first.answers
    return head


def merged_end(parts: list[Part], columns, history: Callable[[], list | None] | None = None) -> dict:
    """The keys after the rows: the summary from every part's rows, the parts' history
    (or ``history()``'s when it gives one), the cache's hits and misses added up."""
    chosen = history() if history is not None else None
    end = {"summary": columns.summary(),
           "history": list(parts[0].head.history if chosen is None else chosen)}
    for key in ("stages", "calls"):  # the order a run writes them in
        records = _merged_records(parts, key)
        if records is not None:
            end[key] = records
    repeat = _merged_repeat(parts)
    if repeat is not None:
        end["repeat"] = repeat
    cache = _merged_cache(parts)
    if cache is not None:
        end["cache"] = cache
    return end


def merged_rows(records: list[ShardRecord], rows: Iterable[Iterator]) -> Iterator:
    """The parts' rows (``rows``: one iterator a part, in the order of ``records``) in
    gold-set order. Each part's positions ascend, so one row a part is held at a time."""
    streams = [zip(r.positions, part_rows) for r, part_rows in zip(records, rows)]
    for _, row in heapq.merge(*streams, key=lambda pair: pair[0]):
        yield row
