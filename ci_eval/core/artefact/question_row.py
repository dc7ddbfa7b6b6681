"""A question's row in a version 2 artefact, and its version 1 object.

Version 1 wrote each question as an object, so a 100,000-question artefact repeated every
key 100,000 times and every ranking entry as ``{"id": ..., "score": ...}``. Version 2
writes a row as an array in the order of ``QUESTION_FIELDS`` (recorded in the artefact as
``question_fields``), gold and ranking as ``[id, value]`` pairs, and the metric values in
the order of the artefact's ``metrics`` list. The two shapes hold the same facts: these two
functions turn one into the other without loss, which is how a version 1 artefact is still
read and how the tests hold the two writers to each other.
"""

from __future__ import annotations

from collections.abc import Sequence

QUESTION_FIELDS = (
    "id", "question", "tags", "unanswerable", "status", "gold", "stale", "metrics",
    "first_gold_rank", "top_score", "latency_ms", "answer_correct", "judged_at_k", "error",
    "warnings", "ranking",
)
FIELD = {name: position for position, name in enumerate(QUESTION_FIELDS)}
# Fields a version 1 object may leave out, and what their absence meant.
V1_DEFAULTS = {"latency_ms": None, "answer_correct": None, "judged_at_k": None, "error": None,
               "warnings": []}


# A metric value, top score or judged@k that is a whole number is written as one (``1``,
# not ``1.0``: two bytes of the ten values of most rows) and read back as the same float. Only below 2**53, where
# every integer is a float exactly and is written in fewer characters than its repr; never
# -0.0, whose sign an integer cannot carry.
EXACT_INTEGERS = 2.0 ** 53


WHOLE_AS_INT = ("top_score", "judged_at_k")  # besides the metric values


def written_value(value):
    """A metric value as a row holds it: a whole float as an int."""
    if type(value) is float and value.is_integer() and abs(value) < EXACT_INTEGERS and (value or str(value)[0] != "-"):
        return int(value)
    return value


def read_value(value):
    """A metric value of a row as the float it stands for (None stays None)."""
    return float(value) if type(value) is int else value


def to_row(question: dict, metrics: Sequence[str]) -> list:
    """A version 1 question object -> its version 2 row."""
    values = question.get("metrics") or {}
    row = []
    for name in QUESTION_FIELDS:
        if name == "gold":
            row.append([[cid, grade] for cid, grade in sorted(question["gold"].items())])
        elif name == "metrics":
            row.append([written_value(values.get(m)) for m in metrics] if values else [])
        elif name == "ranking":
            row.append([[entry["id"], entry["score"]] for entry in question["ranking"]])
        elif name in WHOLE_AS_INT:
            row.append(written_value(question.get(name)))
        elif name in V1_DEFAULTS:
            row.append(question.get(name, V1_DEFAULTS[name]))
        else:
            row.append(question[name])
    return row


def from_row(row: Sequence, metrics: Sequence[str]) -> dict:
    """A version 2 row -> the version 1 object holding the same facts (every optional field
    present; a metric recorded as null is left out, as version 1 would not have it)."""
    question = dict(zip(QUESTION_FIELDS, row))
    question["gold"] = {cid: grade for cid, grade in question["gold"]}
    question["metrics"] = {m: read_value(v) for m, v in zip(metrics, question["metrics"]) if v is not None}
    question["ranking"] = [{"id": cid, "score": score} for cid, score in question["ranking"]]
    for name in WHOLE_AS_INT:
        question[name] = read_value(question[name])
    return question


# What a question's history takes from its row (``history_facts``): inputs/history_file.py
# decodes these fields of each row and passes over the others.
HISTORY_FIELDS = ("id", "tags", "gold", "unanswerable", "first_gold_rank", "metrics")


def history_facts(row: Sequence, metrics: Sequence[str]) -> tuple:
    """What a question's history takes from its version 2 row (``HISTORY_FIELDS``): (id,
    tags, gold pairs, unanswerable, first gold rank, {metric: value})."""
    qid, tags, gold, unanswerable, rank, values = (row[FIELD[name]] for name in HISTORY_FIELDS)
    return qid, tags, gold, bool(unanswerable), rank, dict(zip(metrics, values))
