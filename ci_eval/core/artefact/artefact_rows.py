"""The artefact's question rows checked in straight-line code (version 1's objects and
version 2's arrays).

jsonschema dispatches through its keywords per node: 100,000 rows of 15 ranking entries and
10 metrics are millions of calls. This is the same schema ($defs.question of artefact.schema.json, and of artefact-v2.schema.json)
written out by hand for the row, so a valid artefact is accepted in one pass. It only answers
"valid?"; a row it refuses is explained by jsonschema. tests/test_artefact_rows.py holds both
to jsonschema's verdicts.
"""

from __future__ import annotations

from ci_eval.core.limits import (
    MAX_ID_BYTES,
    MAX_JUDGED,
    MAX_QUESTION_CHARS,
    MAX_QUESTION_ID_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS_PER_QUESTION,
)

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
        if not isinstance(cid, str) or len(cid) > MAX_ID_BYTES or not _number(score):
            return False
    return True


def _metrics_valid(metrics) -> bool:
    if not isinstance(metrics, dict) or len(metrics) > _MAX_METRICS:
        return False
    return all(_number(v) for v in metrics.values())


def _gold_valid(gold) -> bool:
    if not isinstance(gold, dict) or len(gold) > MAX_JUDGED:
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
    if not (isinstance(qid, str) and 1 <= len(qid) <= MAX_QUESTION_ID_CHARS):
        return False
    if not (isinstance(text, str) and len(text) <= MAX_QUESTION_CHARS):
        return False
    if not isinstance(q["unanswerable"], bool) or not (isinstance(status, str) and status in _STATUSES):
        return False
    rank, top = q["first_gold_rank"], q["top_score"]
    if rank is not None and not (_integer(rank) and rank >= 1):
        return False
    if top is not None and not _number(top):
        return False
    return (_strings(q["tags"], MAX_TAGS_PER_QUESTION, MAX_TAG_CHARS)
            and _strings(q["stale"], MAX_JUDGED, MAX_ID_BYTES) and _gold_valid(q["gold"])
            and _metrics_valid(q["metrics"]) and _ranking_valid(q["ranking"]) and _optional_valid(q))


# --------------------------------------------------------------------------- version 2
# A row is an array in the order of core.question_row.QUESTION_FIELDS, exactly 16 entries.
_ROW_LENGTH = 16


def _optional_string(v, max_length: int) -> bool:
    return v is None or (isinstance(v, str) and len(v) <= max_length)


def _optional_number(v, low=None, high=None) -> bool:
    if v is None:
        return True
    if not _number(v):
        return False
    return (low is None or v >= low) and (high is None or v <= high)


def _pairs_valid(pairs, max_items: int, second) -> bool:
    """``[[chunk id, value], ...]``: each pair exactly two entries, the id a string of at most
    MAX_ID_BYTES characters (the schemas' bound)."""
    if not isinstance(pairs, list) or len(pairs) > max_items:
        return False
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2:
            return False
        cid, value = pair
        if not isinstance(cid, str) or len(cid) > MAX_ID_BYTES or not second(value):
            return False
    return True


def _ranking_valid_v2(pairs) -> bool:
    """``[[chunk id, score], ...]``, the row's longest part: the pair check written out with
    exact types (what json gives; a bool's type is not int), one pair at a time. A subclass of
    list, str, int or float is refused here, then judged by jsonschema."""
    if type(pairs) is not list or len(pairs) > 10_000:
        return False
    for pair in pairs:
        if type(pair) is not list or len(pair) != 2:
            return False
        cid, score = pair
        kind = type(score)
        if type(cid) is not str or len(cid) > MAX_ID_BYTES or (kind is not float and kind is not int):
            return False
    return True


def _grade(v) -> bool:
    return _integer(v) and -1000 <= v <= 1000


def _row_values_valid(values) -> bool:
    if not isinstance(values, list) or len(values) > _MAX_METRICS:
        return False
    return all(v is None or _number(v) for v in values)


def question_row_v2_valid(row) -> bool:
    """What jsonschema says of ``row`` against artefact-v2.schema.json's question row."""
    if not isinstance(row, list) or len(row) != _ROW_LENGTH:
        return False
    (qid, text, tags, unanswerable, status, gold, stale, values, rank, top, latency,
     answer_correct, judged, error, warnings, ranking) = row
    if not (isinstance(qid, str) and 1 <= len(qid) <= MAX_QUESTION_ID_CHARS):
        return False
    if not (isinstance(text, str) and len(text) <= MAX_QUESTION_CHARS):
        return False
    if not isinstance(unanswerable, bool) or not (isinstance(status, str) and status in _STATUSES):
        return False
    if rank is not None and not (_integer(rank) and rank >= 1):
        return False
    if not (_optional_number(top) and _optional_number(latency, 0)
            and _optional_number(judged, 0, 1)):
        return False
    if answer_correct is not None and not isinstance(answer_correct, bool):
        return False
    return (_optional_string(error, 2000) and _strings(tags, MAX_TAGS_PER_QUESTION, MAX_TAG_CHARS)
            and _strings(stale, MAX_JUDGED, MAX_ID_BYTES) and _strings(warnings, 50, 2000)
            and _row_values_valid(values) and _pairs_valid(gold, MAX_JUDGED, _grade)
            and _ranking_valid_v2(ranking))
