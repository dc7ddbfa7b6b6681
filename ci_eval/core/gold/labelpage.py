"""What the labelling page is sent, and what it may send back: pure functions over the gold
document, the session's pools and the chunk texts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ci_eval.core.gold.candidates import Candidate
from ci_eval.core.gold.judgement import MAX_GRADE, UNSURE, judged_ids, marks_of, unsure_ids
from ci_eval.core.limits import MAX_ID_BYTES, MAX_QUESTION_CHARS
from ci_eval.errors import InputError

MAX_NOTE = 2000
MAX_ID = MAX_ID_BYTES  # characters, as the gold set's schema counts them
NO_TEXT = "(no text for this chunk)"
NO_PLACE = "the chunk source does not say where this chunk sits in its document"


def questions_by_id(doc: dict) -> dict[str, tuple[dict, bool]]:
    """``{id: (question dict, pending?)}`` for every question of the file, found once."""
    found = {q["id"]: (q, False) for q in doc.get("questions", [])}
    found.update({q["id"]: (q, True) for q in doc.get("provenance", {}).get("pending", [])})
    return found


def spans_in(question: dict, place: Mapping[str, Any]) -> list[dict]:
    """The question's span evidence that falls in a chunk placed at ``place`` (its
    ``doc``, ``start``, ``length`` and ``at``, as the page gets it), as offsets in the
    chunk's shown text, each with its grade."""
    out = []
    lo, hi = place["start"], place["start"] + place["length"]
    for e in question.get("evidence") or ():
        if not isinstance(e, dict) or e.get("doc") != place["doc"] or "quote" in e:
            continue
        start, end = e.get("start"), e.get("end")
        if not isinstance(start, int) or not isinstance(end, int) or end <= lo or start >= hi:
            continue
        out.append({"start": place["at"] + max(start, lo) - lo, "end": place["at"] + min(end, hi) - lo,
                    "grade": e.get("grade", 1)})
    return sorted(out, key=lambda x: (x["start"], x["end"]))


def _placed(chunk: dict, question: dict, place, whole: bool) -> None:
    """A chunk's recorded ``spans`` (when it has any), and with its text (``whole``) its
    ``place`` or ``no_span``: why no span of it can be recorded."""
    if isinstance(place, Mapping):
        if whole:
            chunk["place"] = dict(place)
        spans = spans_in(question, place)
        if spans or whole:
            chunk["spans"] = spans
    elif isinstance(place, str) and whole:
        chunk["no_span"] = place


def question_entry(doc: dict, found: tuple[dict, bool], pooled: Sequence[str],
                   texts: Mapping[str, str] | None,
                   suggested: Mapping[tuple[str, str], int] | None = None,
                   places: Mapping[str, Any] | None = None) -> dict:
    """One question as the page holds it. ``earlier`` counts its chunks judged outside this
    session's pool (before a restart, or by a deeper pool), so the header's count of what is
    judged does not start again at 0. Without ``texts`` the chunks carry no text: an answer
    to a decision sends marks only, the page keeps the texts it was sent once. A chunk the
    judge suggested a grade for carries it as ``suggested`` (never as its ``mark``)."""
    q, pending = found
    marks = marks_of(doc, q, pooled)
    in_pool = set(pooled)
    earlier = len((judged_ids(q) | unsure_ids(doc, q)) - in_pool)
    if texts is None:
        chunks = [{"id": c, "mark": m} for c, m in zip(pooled, marks)]
    else:
        chunks = [{"id": c, "text": texts.get(c, NO_TEXT), "mark": m} for c, m in zip(pooled, marks)]
    if suggested:
        for chunk in chunks:
            grade = suggested.get((q["id"], chunk["id"]))
            if grade is not None:
                chunk["suggested"] = grade
    if places is not None:
        for chunk in chunks:
            _placed(chunk, q, places.get(chunk["id"], NO_PLACE), texts is not None)
    return {"id": q["id"], "question": q.get("question", ""), "pending": pending,
            "unanswerable": bool(q.get("unanswerable")), "earlier": earlier, "candidates": chunks}


def candidate_entry(c: Candidate) -> dict:
    return {"id": c.id, "question": c.question, "duplicate_of": c.duplicate_of, "decided": c.decided}


def progress(entries: Sequence[dict]) -> dict:
    """The header's count: chunks judged for the session's questions (earlier ones included),
    and chunks left to judge (none in a question marked unanswerable)."""
    judged = to_judge = 0
    for e in entries:
        open_ = sum(c["mark"] is None for c in e["candidates"])
        judged += e["earlier"] + len(e["candidates"]) - open_
        to_judge += 0 if e["unanswerable"] else open_
    return {"judged": judged, "to_judge": to_judge}


def page_state(doc: dict, pools: Mapping[str, Sequence[str]], texts: Mapping[str, str],
               candidates: Sequence[Candidate], judge: str, *,
               suggested: Mapping[tuple[str, str], int] | None = None, suggest: dict | None = None,
               places: Mapping[str, Any] | None = None) -> dict:
    """The page's whole view, fetched once when it opens (every decision's answer is a
    delta: ``delta``). ``pools`` is in walking order; a question someone else removed from
    the file meanwhile is left out. ``suggest``, when a judge suggests grades, is its status
    and agreement with the person so far."""
    by_id = questions_by_id(doc)
    questions = [question_entry(doc, by_id[qid], pooled, texts, suggested, places)
                 for qid, pooled in pools.items() if qid in by_id]
    out = {
        "judge": judge,
        "max_grade": MAX_GRADE,
        "questions": questions,
        "candidates": [candidate_entry(c) for c in candidates],
        "progress": progress(questions),
    }
    if suggest is not None:
        out["suggest"] = suggest
    return out


def delta(doc: dict, pools: Mapping[str, Sequence[str]], changed: Sequence[str], *,
          texts: Mapping[str, str] | None = None, candidates: Sequence[Candidate] = (),
          suggested: Mapping[tuple[str, str], int] | None = None, suggest: dict | None = None,
          places: Mapping[str, Any] | None = None) -> dict:
    """What a decision changed, for the page to merge into the state it holds: the questions
    ``changed`` (``removed`` when no longer in the file or the session), with texts only when
    ``texts`` is given (a question the page has not seen), and the candidates decided. Its
    size does not grow with the gold set."""
    by_id = questions_by_id(doc)
    live = [qid for qid in changed if qid in by_id and qid in pools]
    out: dict[str, Any] = {"questions": [question_entry(doc, by_id[qid], pools[qid], texts, suggested, places)
                                         for qid in live]}
    gone = [qid for qid in changed if qid not in live]
    if gone:
        out["removed"] = gone
    if candidates:
        out["candidates"] = [candidate_entry(c) for c in candidates]
    if suggest is not None:
        out["suggest"] = suggest
    return out


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


def _offset(body: dict, key: str) -> int:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**9:
        raise InputError("must be a whole number of characters, 0 or more", "request", key)
    return value


REQUEST_KEYS = {
    "grade": {"question", "chunk", "grade", "seen", "note"},
    "span": {"question", "chunk", "start", "end", "grade"},
    "unanswerable": {"question", "value"},
    "edit": {"question", "text", "seen"},
    "keep": {"candidate"},
    "bin": {"candidate"},
    "undecide": {"candidate"},
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
    if kind in ("keep", "bin", "undecide"):
        return {"candidate": _text(body, "candidate", MAX_ID)}
    out: dict[str, Any] = {"question": _text(body, "question", MAX_ID)}
    if kind == "grade":
        out.update(chunk=_text(body, "chunk", MAX_ID), grade=_grade(body, "grade", allow_unsure=False),
                   seen=_grade(body, "seen", allow_unsure=True), note=_text(body, "note", MAX_NOTE, optional=True))
    elif kind == "span":
        out.update(chunk=_text(body, "chunk", MAX_ID), start=_offset(body, "start"), end=_offset(body, "end"))
        grade = body.get("grade")
        if isinstance(grade, bool) or not isinstance(grade, int) or not 1 <= grade <= MAX_GRADE:
            raise InputError(f"a span is evidence: must be an integer from 1 to {MAX_GRADE}", "request", "grade")
        if out["end"] <= out["start"]:
            raise InputError(f"the selection is empty ({out['start']}..{out['end']}): select some text first",
                             "request", "end")
        out["grade"] = grade
    elif kind == "unanswerable":
        if not isinstance(body.get("value"), bool):
            raise InputError("must be true or false", "request", "value")
        out["value"] = body["value"]
    else:
        out.update(text=_text(body, "text", MAX_QUESTION_CHARS), seen=_text(body, "seen", MAX_QUESTION_CHARS, optional=True))
    return out
