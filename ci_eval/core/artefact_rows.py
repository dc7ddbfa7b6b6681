"""The artefact's question rows checked in straight-line code.

The compiled schema check of core/validate.py dispatches through a closure per keyword and
per node: 100,000 rows of 15 ranking entries and 10 metrics are millions of calls. This is
the same schema ($defs.question of artefact.schema.json) written out by hand for the row, so
a valid artefact is accepted in one pass. It only answers "valid?"; a row it refuses is
explained by jsonschema. tests/test_artefact_rows.py holds it to jsonschema's verdicts.
"""

from __future__ import annotations

_STATUSES = frozenset(("ok", "stale", "unanswerable", "error"))
_REQUIRED = ("id", "question", "tags", "unanswerable", "gold", "stale", "status", "ranking",
             "first_gold_rank", "top_score", "metrics")
_MAX_METRICS = 200


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _integer(v) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


def _strings(v, max_items: int, max_length: int) -> bool:
    if not isinstance(v, list) or len(v) > max_items:
        return False
    return all(isinstance(s, str) and len(s) <= max_length for s in v)


def _ranking_valid(ranking) -> bool:
    if not isinstance(ranking, list) or len(ranking) > 10_000:
        return False
    for entry in ranking:
        if not isinstance(entry, dict) or "id" not in entry or "score" not in entry:
            return False
        cid, score = entry["id"], entry["score"]
        if not isinstance(cid, str) or len(cid) > 1000 or not _number(score):
            return False
    return True


def _metrics_valid(metrics) -> bool:
    if not isinstance(metrics, dict) or len(metrics) > _MAX_METRICS:
        return False
    return all(_number(v) for v in metrics.values())


def _gold_valid(gold) -> bool:
    if not isinstance(gold, dict) or len(gold) > 1000:
        return False
    return all(_integer(g) and -1000 <= g <= 1000 for g in gold.values())


def _optional_valid(q: dict) -> bool:
    """The keys a row may leave out."""
    if "error" in q:
        error = q["error"]
        if error is not None and not (isinstance(error, str) and len(error) <= 2000):
            return False
    if "warnings" in q and not _strings(q["warnings"], 50, 2000):
        return False
    if "latency_ms" in q:
        latency = q["latency_ms"]
        if latency is not None and not (_number(latency) and latency >= 0):
            return False
    if "answer_correct" in q and q["answer_correct"] is not None and not isinstance(q["answer_correct"], bool):
        return False
    if "judged_at_k" in q:
        judged = q["judged_at_k"]
        if judged is not None and not (_number(judged) and 0 <= judged <= 1):
            return False
    return True


def question_row_valid(q) -> bool:
    """What jsonschema says of ``q`` against the artefact schema's question row."""
    if not isinstance(q, dict):
        return False
    for key in _REQUIRED:
        if key not in q:
            return False
    qid, text, status = q["id"], q["question"], q["status"]
    if not (isinstance(qid, str) and 1 <= len(qid) <= 200):
        return False
    if not (isinstance(text, str) and len(text) <= 10_000):
        return False
    if not isinstance(q["unanswerable"], bool) or not (isinstance(status, str) and status in _STATUSES):
        return False
    rank, top = q["first_gold_rank"], q["top_score"]
    if rank is not None and not (_integer(rank) and rank >= 1):
        return False
    if top is not None and not _number(top):
        return False
    return (_strings(q["tags"], 50, 100) and _strings(q["stale"], 1000, 1000) and _gold_valid(q["gold"])
            and _metrics_valid(q["metrics"]) and _ranking_valid(q["ranking"]) and _optional_valid(q))
