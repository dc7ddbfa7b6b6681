"""Gold set + what the retriever returned + the index's ids -> per-question results.

Conventions (stated once, here):
- A gold id missing from the index is *stale*. Stale ids are removed from the question's
  gold before measuring, and a question left with no relevant gold is reported apart
  (status "stale") and kept out of the means, so a re-ingestion reads as stale labels,
  never as a catastrophic recall regression.
- Answerable questions (status "ok", or "error" when the retriever failed on them, scored
  0 so a broken retriever cannot raise a mean) form the means, overall and per tag.
- Unanswerable questions are measured only by the abstention cutoff: the app abstains when
  nothing comes back or the top score is below ``abstain_below``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ci_eval.core.goldset import GoldSet, Question
from ci_eval.core.judged import judged_at_k, mean_judged
from ci_eval.core.results import Retrieved


@dataclass(frozen=True)
class Evaluation:
    questions: list
    summary: dict


def _status(q: Question, live_relevant: bool, stale: list, r: Retrieved) -> str:
    if q.unanswerable:
        return "unanswerable"
    # Only missing ids make a question stale; one with no grade at the relevance level is
    # measured and scores 0, as trec_eval counts a query with no relevant documents.
    if stale and not live_relevant:
        return "stale"
    return "error" if r.failed else "ok"


def abstains(top_score: float | None, cutoff: float | None) -> bool:
    """The app says "I could not find this" when nothing came back or the top score is
    below the cutoff. Without a cutoff only an empty result abstains."""
    if top_score is None:
        return True
    return cutoff is not None and top_score < cutoff


def evaluate(
    gold: GoldSet,
    retrieved: Iterable[tuple[str, Retrieved]],
    *,
    k: int,
    metrics: tuple[str, ...],
    relevance_level: int = 1,
    index_ids=None,
    abstain_below: float | None = None,
    answers: Mapping[str, bool] | None = None,
) -> Evaluation:
    from ci_eval.core.metrics import compute, resolve_metric

    by_id = gold.by_id()
    entries = []
    measured: list[int] = []  # positions of the entries that get metric values
    rankings, judgments = [], []
    for qid, r in retrieved:
        q = by_id[qid]
        gold_map = q.gold_map
        stale = sorted(g for g in gold_map if index_ids is not None and g not in index_ids)
        live = {g: grade for g, grade in gold_map.items() if g not in stale}
        live_relevant = any(grade >= relevance_level for grade in live.values())
        status = _status(q, live_relevant, stale, r)
        first = next(
            (i for i, cid in enumerate(r.ids, 1) if live.get(cid, 0) >= relevance_level), None
        )
        entry = {
            "id": q.id,
            "question": q.question,
            "tags": list(q.tags),
            "unanswerable": q.unanswerable,
            "gold": gold_map,
            "stale": stale,
            "status": status,
            "error": r.error,
            "warnings": list(r.warnings),
            "ranking": [{"id": c, "score": s} for c, s in zip(r.ids, r.scores)],
            "first_gold_rank": first,
            "top_score": r.scores[0] if r.scores else None,
            "metrics": {},
            "latency_ms": None if r.latency_ms is None else round(r.latency_ms, 3),
            "answer_correct": None if answers is None else answers.get(q.id),
            # Over the whole gold map (stale ids cannot be retrieved, so they never count).
            "judged_at_k": judged_at_k(r.ids, gold_map, k) if status in ("ok", "error") else None,
        }
        if status in ("ok", "error"):
            measured.append(len(entries))
            rankings.append(r.ids)
            judgments.append(live)
        entries.append(entry)

    resolved = [resolve_metric(m) for m in metrics]
    values = compute(resolved, rankings, judgments, relevance_level) if measured else {}
    for row, position in enumerate(measured):
        entries[position]["metrics"] = {m.name: float(values[m.name][row]) for m in resolved}

    return Evaluation(entries, summarise_run(entries, metrics, abstain_below, k))


def summarise_run(entries: list, metrics, abstain_below: float | None, k: int) -> dict:
    """The artefact's whole summary from its per-question rows: what a run writes and what
    the merge of a sharded run's parts recomputes, so the two cannot drift apart."""
    summary = summarise(entries, metrics, abstain_below)
    summary["judged_at_k"] = {"k": k, "mean": mean_judged(e["judged_at_k"] for e in entries)}
    return summary


def _means(rows: list, metrics) -> dict:
    if not rows:
        return {}
    return {m: math.fsum(r["metrics"][m] for r in rows) / len(rows) for m in metrics}


def _percentile(sorted_values: list, p: float) -> float:
    # Nearest-rank percentile: an observed latency, never an interpolated one.
    index = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[index]


def summarise(entries: list, metrics, abstain_below: float | None) -> dict:
    measured = [e for e in entries if e["status"] in ("ok", "error")]
    by_tag: dict[str, list] = {}
    for e in measured:
        for tag in e["tags"]:
            by_tag.setdefault(tag, []).append(e)
    unanswerable = [e for e in entries if e["unanswerable"]]
    latencies = sorted(e["latency_ms"] for e in entries if e["latency_ms"] is not None)
    return {
        "overall": {"count": len(measured), "means": _means(measured, metrics)},
        "by_tag": {
            tag: {"count": len(rows), "means": _means(rows, metrics)} for tag, rows in sorted(by_tag.items())
        },
        "stale": {
            "questions": sum(e["status"] == "stale" for e in entries),
            "ids": sum(len(e["stale"]) for e in entries),
        },
        "unanswerable": {
            "count": len(unanswerable),
            "abstained": sum(abstains(e["top_score"], abstain_below) for e in unanswerable),
            "cutoff": abstain_below,
        },
        "errors": sum(e["status"] == "error" for e in entries),
        "latency_ms": {
            "mean": round(math.fsum(latencies) / len(latencies), 3),
            "p50": _percentile(latencies, 50),
            "p95": _percentile(latencies, 95),
        }
        if latencies
        else None,
    }
