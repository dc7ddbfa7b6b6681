"""The parts of a sharded run -> the artefact one unsharded run would have written.

Strict on purpose: a merge that goes green with a shard missing, or that mixes parts of two
runs, reports a number nobody measured. Every summary figure (means, per-tag means, stale
and unanswerable counts, latency percentiles) is recomputed from the per-question rows by
the same core/run_columns.py the run feeds; nothing per-shard is averaged.

The parts are checked from their top-level keys and question ids alone (``Part``); the
rows then stream through in gold-set order, one per part held at a time.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ci_eval.core.shard import config_sha256, shard_of
from ci_eval.errors import InputError

# Keys every part of one run must hold identically (the shard record checks the rest).
_SAME = ("tool", "git", "config", "gold_set", "index", "k", "metrics", "abstain_below", "history")
_IDENTITY = ("gold_sha256", "config_sha256", "index_version")


@dataclass(frozen=True)
class Part:
    """One part as the checks see it: where it came from, its top-level keys but the
    questions, and its question ids in order."""

    source: str
    header: dict
    ids: list


def part_of(source: str, artefact: dict) -> Part:
    """A validated (version 1 shaped) artefact -> its Part."""
    return Part(source, {k: v for k, v in artefact.items() if k != "questions"},
                [q["id"] for q in artefact["questions"]])


def _record(artefact: dict, ids: list, source: str) -> dict:
    shard = artefact.get("shard")
    if not isinstance(shard, dict):
        raise InputError("is not a shard part (write parts with `ci-eval run --shard I/N`)", source)
    if shard["ids"] != ids or len(shard["positions"]) != len(ids):
        raise InputError("the part's questions do not match its shard record", source, "shard.ids")
    if shard["index"] > shard["count"]:
        raise InputError(f"shard {shard['index']}/{shard['count']} is not a shard", source, "shard.index")
    if shard["config_sha256"] != config_sha256(artefact["config"]):
        raise InputError("the part's config does not match its config_sha256", source, "shard.config_sha256")
    if shard["gold_sha256"] != artefact["gold_set"]["sha256"]:
        raise InputError("the part's gold set does not match its gold_sha256", source, "shard.gold_sha256")
    return shard


def _check_assignment(parts: list[tuple[str, dict]], records: list[dict]) -> None:
    """Each question sits in the shard its id hashes to: a part cut by another rule (or
    edited) could hide a question from every part."""
    for (source, _), record in zip(parts, records):
        stray = next((i for i in record["ids"] if shard_of(i, record["count"]) != record["index"]), None)
        if stray is not None:
            raise InputError(f"question {stray!r} does not belong to shard {record['index']}/{record['count']}",
                             source, "shard.ids")


def _check_same_run(parts: list[tuple[str, dict]], records: list[dict]) -> None:
    (first_source, first), first_record = parts[0], records[0]
    for (source, part), record in zip(parts[1:], records[1:]):
        if record["count"] != first_record["count"]:
            raise InputError(f"is shard {record['index']}/{record['count']}, but {first_source} is one of "
                             f"{first_record['count']}", source, "shard.count")
        for key in _IDENTITY:
            if record[key] != first_record[key]:
                what = key.replace("_sha256", "").replace("_", " ")
                raise InputError(f"comes from a different {what} than {first_source} "
                                 f"({record[key]!r} vs {first_record[key]!r})", source, f"shard.{key}")
        for key in _SAME:
            if part.get(key) != first.get(key):
                raise InputError(f"differs from {first_source} in {key!r}: parts of one run only",
                                 source, key)


def _check_complete(parts: list[tuple[str, dict]], records: list[dict]) -> None:
    by_index: dict[int, str] = {}
    owner: dict[str, str] = {}
    for (source, _), record in zip(parts, records):
        label = f"{record['index']}/{record['count']}"
        if record["index"] in by_index:
            raise InputError(f"shard {label} is given twice (also {by_index[record['index']]})", source)
        by_index[record["index"]] = source
        for qid in record["ids"]:
            if qid in owner:
                raise InputError(f"question {qid!r} is also in {owner[qid]}", source, "shard.ids")
            owner[qid] = source
    count = records[0]["count"]
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        listed = ", ".join(f"{i}/{count}" for i in missing)
        given = ", ".join(source for source, _ in parts)
        raise InputError(f"shard{'s' if len(missing) > 1 else ''} {listed} "
                         f"{'are' if len(missing) > 1 else 'is'} missing: the merge needs all {count} "
                         f"parts of the run, got {len(by_index)} ({given})")
    expected = parts[0][1]["gold_set"].get("questions")
    positions = sorted(p for r in records for p in r["positions"])
    if positions != list(range(len(positions))) or (expected is not None and len(positions) != expected):
        raise InputError(f"the parts hold {len(positions)} questions at positions that do not cover the "
                         f"gold set's {expected}", parts[0][0], "shard.positions")


def _merged_cache(artefacts: list[dict]) -> dict | None:
    used = [a["cache"] for a in artefacts if a.get("cache")]
    if not used:
        return None
    return {"hits": sum(c["hits"] for c in used), "misses": sum(c["misses"] for c in used)}


def check_parts(parts: list[Part]) -> list[dict]:
    """Refuse parts that are not all of one run; their shard records, in the parts' order."""
    if not parts:
        raise InputError("no parts to merge", "merge")
    pairs = [(p.source, p.header) for p in parts]
    records = [_record(p.header, p.ids, p.source) for p in parts]
    _check_same_run(pairs, records)
    _check_complete(pairs, records)
    _check_assignment(pairs, records)
    for (source, _), record in zip(pairs, records):
        positions = record["positions"]
        if any(a >= b for a, b in zip(positions, positions[1:])):
            # A run writes its questions in gold-set order; the merge streams on that.
            raise InputError("the part's positions are not in gold-set order", source, "shard.positions")
    return records


def merged_head(parts: list[Part]) -> dict:
    """The merged artefact's keys known before its rows (no shard record: it is whole)."""
    from ci_eval.core.artefact import artefact_head

    first = parts[0].header
    return artefact_head(
        tool_version=first["tool"]["version"],
        created_at=max(p.header["created_at"] for p in parts),
        git=first.get("git"),
        config=first["config"],
        gold_set=first["gold_set"],
        index=first["index"],
        k=first["k"],
        metrics=first["metrics"],
        abstain_below=first.get("abstain_below"),
    )


def merged_end(parts: list[Part], columns, history: Callable[[], list | None] | None = None) -> dict:
    """The keys after the rows: the summary from every part's rows, the parts' history
    (or ``history()``'s when it gives one), the cache's hits and misses added up."""
    chosen = history() if history is not None else None
    end = {"summary": columns.summary(),
           "history": list(parts[0].header.get("history") or [] if chosen is None else chosen)}
    cache = _merged_cache([p.header for p in parts])
    if cache is not None:
        end["cache"] = cache
    return end


def merged_rows(records: list[dict], rows: Iterable[Iterator]) -> Iterator:
    """The parts' rows (``rows``: one iterator a part, in the order of ``records``) in
    gold-set order. Each part's positions ascend, so one row a part is held at a time."""
    streams = [zip(r["positions"], part_rows) for r, part_rows in zip(records, rows)]
    for _, row in heapq.merge(*streams, key=lambda pair: pair[0]):
        yield row
