"""What the labelling page is sent, and what it may send back: pure functions over the gold
document, the session's pools and the chunk texts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ci_eval.core.candidates import Candidate
from ci_eval.core.judgement import MAX_GRADE, UNSURE, mark_of
from ci_eval.errors import InputError

MAX_NOTE = 2000
MAX_QUESTION = 10000
MAX_ID = 1000
NO_TEXT = "(no text for this chunk)"


def _questions_by_id(doc: dict) -> dict[str, tuple[dict, bool]]:
    found = {q["id"]: (q, False) for q in doc.get("questions", [])}
    found.update({q["id"]: (q, True) for q in doc.get("provenance", {}).get("pending", [])})
    return found


def page_state(doc: dict, pools: Mapping[str, Sequence[str]], texts: Mapping[str, str],
               candidates: Sequence[Candidate], judge: str) -> dict:
    """The page's whole view. ``pools`` is in walking order; a question someone else removed
    from the file meanwhile is left out."""
    by_id = _questions_by_id(doc)
    questions, judged, to_judge = [], 0, 0
    for qid, pooled in pools.items():
        if qid not in by_id:
            continue
        q, pending = by_id[qid]
        marks = [mark_of(doc, qid, c) for c in pooled]
        unanswerable = bool(q.get("unanswerable"))
        judged += sum(m is not None for m in marks)
        to_judge += 0 if unanswerable else sum(m is None for m in marks)
        questions.append({
            "id": qid, "question": q.get("question", ""), "pending": pending, "unanswerable": unanswerable,
            "candidates": [{"id": c, "text": texts.get(c, NO_TEXT), "mark": m} for c, m in zip(pooled, marks)],
        })
    return {
        "judge": judge,
        "max_grade": MAX_GRADE,
        "questions": questions,
        "candidates": [{"id": c.id, "question": c.question, "duplicate_of": c.duplicate_of,
                        "decided": c.decided} for c in candidates],
        "progress": {"judged": judged, "to_judge": to_judge},
    }


def _text(body: dict, key: str, limit: int, *, optional: bool = False) -> str | None:
    value = body.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError("must be a non-empty string", "request", key)
    if len(value) > limit:
        raise InputError(f"longer than {limit} characters", "request", key)
    return value


def _grade(body: dict, key: str, *, allow_unsure: bool):
    value = body.get(key)
    if value is None or (allow_unsure and value == UNSURE):
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_GRADE:
        raise InputError(f"must be an integer from 0 to {MAX_GRADE} or null", "request", key)
    return value


REQUEST_KEYS = {
    "grade": {"question", "chunk", "grade", "seen", "note"},
    "unanswerable": {"question", "value"},
    "edit": {"question", "text"},
    "keep": {"candidate"},
    "bin": {"candidate"},
}


def parse_request(kind: str, body: Any) -> dict:
    """Validate one decision from the page like any other input: known fields only, typed
    and bounded, one clear message naming the field."""
    if kind not in REQUEST_KEYS:
        raise InputError(f"unknown request {kind!r}", "request")
    if not isinstance(body, dict):
        raise InputError("expected a JSON object", "request")
    extra = sorted(set(body) - REQUEST_KEYS[kind])
    if extra:
        raise InputError(f"unexpected field {extra[0]!r}", "request")
    if kind in ("keep", "bin"):
        return {"candidate": _text(body, "candidate", MAX_ID)}
    out: dict[str, Any] = {"question": _text(body, "question", MAX_ID)}
    if kind == "grade":
        out.update(chunk=_text(body, "chunk", MAX_ID), grade=_grade(body, "grade", allow_unsure=False),
                   seen=_grade(body, "seen", allow_unsure=True), note=_text(body, "note", MAX_NOTE, optional=True))
    elif kind == "unanswerable":
        if not isinstance(body.get("value"), bool):
            raise InputError("must be true or false", "request", "value")
        out["value"] = body["value"]
    else:
        out["text"] = _text(body, "text", MAX_QUESTION)
    return out
