"""The gold set's file layout, kept stable so a PR diff of the gold set reads well.

One top-level key per line, except ``provenance`` (one key per line), ``questions`` (one
question per line) and ``anchors`` (one chunk id per line). Inside provenance, the per-question labelling records and the pending
questions are one entry per line too. A question's keys keep the order the file gave them,
with new keys after them in a fixed order, so relabelling one chunk changes one line.
"""

from __future__ import annotations

import json
from typing import Any

TOP_ORDER = ("$schema", "schema_version", "index_version", "provenance", "questions")
QUESTION_ORDER = ("id", "question", "gold", "evidence", "tags", "unanswerable", "notes")


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _ordered(d: dict, order: tuple[str, ...]) -> dict:
    first = [k for k in order if k in d]
    return {k: d[k] for k in first + [k for k in d if k not in first]}


def _lines_of(items: list[str], indent: str, opener: str, closer: str) -> str:
    if not items:
        return opener + closer
    return opener + "\n" + ",\n".join(indent + item for item in items) + "\n" + indent[:-2] + closer


def _provenance(prov: dict) -> str:
    parts = []
    for key, value in prov.items():
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            body = _lines_of([f"{_compact_json(k)}: {_compact_json(v)}" for k, v in value.items()], "      ", "{", "}")
        elif isinstance(value, list) and value:
            body = _lines_of([_compact_json(v) for v in value], "      ", "[", "]")
        else:
            body = _compact_json(value)
        parts.append(f"{_compact_json(key)}: {body}")
    return _lines_of(parts, "    ", "{", "}")


def dumps_gold_set(doc: dict) -> str:
    parts = []
    for key, value in _ordered(doc, TOP_ORDER).items():
        if key == "provenance" and isinstance(value, dict):
            body = _provenance(value)
        elif key == "questions" and isinstance(value, list):
            body = _lines_of([_compact_json(_ordered(q, QUESTION_ORDER)) for q in value], "    ", "[", "]")
        elif key == "anchors" and isinstance(value, dict):  # one chunk's fingerprint per line
            body = _lines_of([f"{_compact_json(k)}: {_compact_json(v)}" for k, v in value.items()], "    ", "{", "}")
        else:
            body = _compact_json(value)
        parts.append(f"{_compact_json(key)}: {body}")
    return _lines_of(parts, "  ", "{", "}") + "\n"


def gold_text(doc: dict, previous: str | None, old: dict | None = None) -> str:
    """The text to write for ``doc`` over a file that held ``previous`` (None: no file yet).

    Every gold-set writer goes through here. A file in this module's layout is written in
    it (the lines that carry a change are the ones that change); a file laid out another way
    keeps its layout, only the text of what changed rewritten (core/gold/json_layout.py); a file
    that cannot be followed that way is written in this module's layout.

    ``old``: the document ``previous`` holds, from a caller that has it and knows the file
    is laid out another way (the labelling page's store): the file is then not parsed and
    laid out again to find that out on every key."""
    from ci_eval.core.gold.json_layout import LayoutLost, patch_text

    if previous is None:
        return dumps_gold_set(doc)
    if old is None:
        try:
            old = json.loads(previous)
        except ValueError:
            return dumps_gold_set(doc)
        if dumps_gold_set(old) == previous:
            return dumps_gold_set(doc)
    try:
        return patch_text(previous, old, doc)
    except LayoutLost:
        return dumps_gold_set(doc)
