"""Applying one labelling decision to a gold-set document (the parsed JSON dict).

Every function returns a new document and leaves its argument alone, so a caller can re-read
the file, apply the one decision a page sent, and write the result: two pages on the same
gold set then add to each other's work instead of overwriting it. A decision carries the
mark the page last showed (``seen``); when the file says otherwise, someone else judged that
chunk in the meantime and the decision is refused as a conflict instead of silently winning.

Where things live (the gold-set schema allows extra provenance keys):
- grades: the question's ``gold`` object (0 = judged not relevant, kept); a binary list is
  turned into the graded form, each listed id with grade 1, the first time it is graded;
- who judged what and when: ``provenance.judgements[question id]``, with ``by``/``at`` of
  the last decision and ``chunks[chunk id]`` = ``{"grade", "by", "at"[, "note"]}``; "can't
  tell" is a chunk record with grade null (not a judgement: the gold is unchanged);
- questions with no relevant chunk and no unanswerable mark (a kept candidate not judged yet,
  or a question whose only relevant chunk was regraded 0): ``provenance.pending``, so the gold
  set stays valid for ``ci-eval run`` at every step; the first grade of 1 or more, or the
  unanswerable mark, moves them into ``questions``;
- binned candidates: ``provenance.binned[candidate id]``, so a resumed session skips them;
- a span selected in a chunk's text: a ``{"doc", "start", "end", "grade"}`` entry of the
  question's ``evidence`` (span gold, docs/span-gold.md), and who and when in
  ``provenance.judgements[question id].spans``, one ``{"doc", "start", "end", "grade",
  "chunk", "by", "at"}`` a span.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ci_eval.errors import InputError

MAX_GRADE = 3
UNSURE = "?"


class Conflict(InputError):
    """The file changed under the page: someone else decided this first."""

    def __init__(self, message: str, current):
        super().__init__(message)
        self.current = current


@dataclass(frozen=True)
class Stamp:
    judge: str
    at: str


def _find(doc: dict, qid: str) -> tuple[dict, bool]:
    """The question dict (inside ``doc``) and whether it is still pending."""
    for q in doc.get("questions", []):
        if q.get("id") == qid:
            return q, False
    for q in doc.get("provenance", {}).get("pending", []):
        if q.get("id") == qid:
            return q, True
    raise InputError(f"no question {qid!r} in the gold set")


def _copy_for(doc: dict, qid: str) -> dict:
    """A new document for a decision about ``qid``: the top level, the question lists and the
    provenance maps are new, the question ``qid`` and its judgement record deep copies, and
    everything else (every other question) shared with ``doc``, which no decision changes.
    A key then costs the same at 10 questions and at 10,000 (a whole deep copy did not)."""
    def mine(qs):
        return [copy.deepcopy(q) if isinstance(q, dict) and q.get("id") == qid else q for q in qs]

    new = dict(doc)
    new["questions"] = mine(doc.get("questions", []))
    if isinstance(doc.get("provenance"), dict):
        prov = new["provenance"] = dict(doc["provenance"])
        if "pending" in prov:
            prov["pending"] = mine(prov["pending"])
        if "judgements" in prov:
            prov["judgements"] = dict(prov["judgements"])
            if qid in prov["judgements"]:
                prov["judgements"][qid] = copy.deepcopy(prov["judgements"][qid])
    return new


def _graded(q: dict) -> dict:
    gold = q.get("gold")
    if isinstance(gold, list):
        q["gold"] = {g: 1 for g in gold}
    elif not isinstance(gold, dict):
        q["gold"] = {}
    return q["gold"]


def _record(doc: dict, qid: str, stamp: Stamp) -> dict:
    prov = doc.setdefault("provenance", {})
    rec = prov.setdefault("judgements", {}).setdefault(qid, {})
    rec["by"], rec["at"] = stamp.judge, stamp.at
    rec.setdefault("chunks", {})
    return rec


def _settle(doc: dict, q: dict, pending: bool) -> None:
    """Keep the gold set valid: a question with neither a relevant chunk nor the unanswerable
    mark lives in ``provenance.pending`` until it has one, and moves back when it has."""
    gold = q.get("gold")
    grades = gold.values() if isinstance(gold, dict) else [1] * len(gold or ())
    evidence = [e.get("grade", 1) for e in q.get("evidence") or () if isinstance(e, dict)]
    # span gold counts as much as chunk gold: a span-only question is never pending
    ready = bool(q.get("unanswerable")) or any(v >= 1 for v in [*grades, *evidence])
    prov = doc.setdefault("provenance", {})
    if ready and pending:
        prov["pending"].remove(q)
        doc.setdefault("questions", []).append(q)
    elif not ready and not pending:
        doc["questions"].remove(q)
        prov.setdefault("pending", []).append(q)
    if "pending" in prov and not prov["pending"]:
        del prov["pending"]


def mark_of(doc: dict, qid: str, chunk: str):
    """What a page shows for a chunk: its grade, ``"?"`` for can't tell, None if unjudged."""
    q, _ = _find(doc, qid)
    return marks_of(doc, q, [chunk])[0]


def marks_of(doc: dict, question: dict, chunks) -> list:
    """``mark_of`` for each of ``chunks`` of one question dict (found once, by the caller)."""
    gold = question.get("gold")
    grades = dict.fromkeys(gold, 1) if isinstance(gold, list) else gold if isinstance(gold, dict) else {}
    records = doc.get("provenance", {}).get("judgements", {}).get(question.get("id"), {}).get("chunks", {})
    return [grades[c] if c in grades else _unsure(records.get(c)) for c in chunks]


def unsure_ids(doc: dict, question: dict) -> set[str]:
    """The chunks someone could not tell about: records with grade null."""
    records = doc.get("provenance", {}).get("judgements", {}).get(question.get("id"), {}).get("chunks", {})
    return {c for c, rec in records.items() if _unsure(rec) is not None}


def _unsure(rec):
    return UNSURE if isinstance(rec, dict) and rec.get("grade") is None else None


def judged_ids(question: dict) -> set[str]:
    gold = question.get("gold")
    return set(gold) if isinstance(gold, (list, dict)) else set()


def _mark_words(mark) -> str:
    return "not judged" if mark is None else "can't tell" if mark == UNSURE else f"grade {mark}"


def _recorded_meanwhile(doc: dict, qid: str, chunk: str, current, seen) -> str:
    """Why a grade is refused, in the page's words: what the other page recorded, by whom
    and when (from the judgements' record), against what this page had shown."""
    record = doc.get("provenance", {}).get("judgements", {}).get(qid, {}).get("chunks", {}).get(chunk)
    who = ""
    if isinstance(record, dict) and current is not None and isinstance(record.get("by"), str):
        who = f" by {record['by']}" + (f" at {record['at']}" if isinstance(record.get("at"), str) else "")
    return (f"{chunk!r} for {qid!r} is now {_mark_words(current)}{who} (this page showed "
            f"{_mark_words(seen)}): your grade was not recorded")


def apply_grade(doc: dict, qid: str, chunk: str, grade: int | None, stamp: Stamp, *, seen=None,
                note: str | None = None) -> dict:
    """Grade ``chunk`` for question ``qid`` (0..3), or record "can't tell" (grade None)."""
    if grade is not None and not 0 <= grade <= MAX_GRADE:
        raise InputError(f"grade must be 0 to {MAX_GRADE}, got {grade}")
    current = mark_of(doc, qid, chunk)
    if current != seen and current != (UNSURE if grade is None else grade):
        raise Conflict(_recorded_meanwhile(doc, qid, chunk, current, seen), current)
    new = _copy_for(doc, qid)
    q, pending = _find(new, qid)
    if q.get("unanswerable"):
        raise InputError(f"question {qid!r} is marked unanswerable; unmark it (u) before grading")
    entry = {"grade": grade, "by": stamp.judge, "at": stamp.at}
    if note:
        entry["note"] = note
    _record(new, qid, stamp)["chunks"][chunk] = entry
    if grade is not None:
        _graded(q)[chunk] = grade
    _settle(new, q, pending)
    return new


def apply_span(doc: dict, qid: str, place: tuple[str, int, int], grade: int, stamp: Stamp, *,
               chunk: str) -> dict:
    """Record the span ``place`` = (document, start, end) as evidence for ``qid`` at
    ``grade`` (1 to 3), selected in ``chunk``'s text. The same span given again is regraded,
    not repeated."""
    name, start, end = place
    if not 1 <= grade <= MAX_GRADE:
        raise InputError(f"a span is evidence: its grade must be 1 to {MAX_GRADE}, got {grade}")
    if not 0 <= start < end:
        raise InputError(f"a span must hold at least one character, got {start}..{end}")
    new = _copy_for(doc, qid)
    q, pending = _find(new, qid)
    if q.get("unanswerable"):
        raise InputError(f"question {qid!r} is marked unanswerable; unmark it (u) before recording evidence")
    entry = {"doc": name, "start": start, "end": end, "grade": grade}
    evidence = [e for e in q.get("evidence") or () if not (isinstance(e, dict) and e.get("doc") == name
                                                           and e.get("start") == start and e.get("end") == end)]
    q["evidence"] = [*evidence, entry]
    if "gold" not in q:
        q["gold"] = []
    rec = _record(new, qid, stamp)
    spans = [s for s in rec.get("spans", ()) if (s.get("doc"), s.get("start"), s.get("end")) != place]
    rec["spans"] = [*spans, {**entry, "chunk": chunk, "by": stamp.judge, "at": stamp.at}]
    _settle(new, q, pending)
    return new


def apply_unanswerable(doc: dict, qid: str, value: bool, stamp: Stamp) -> dict:
    """Mark (or unmark) a question unanswerable. The schema wants an unanswerable question's
    gold empty: its 0 grades are set aside in ``provenance.judgements[qid].set_aside`` and
    come back when the mark is taken off, so marking and unmarking loses nothing. A relevant
    grade is a contradiction the judge must resolve first. Unmarked with no relevant chunk,
    the question waits in pending for one."""
    new = _copy_for(doc, qid)
    q, pending = _find(new, qid)
    rec = _record(new, qid, stamp)
    if value and not q.get("unanswerable"):
        grades = _graded(q)
        relevant = sorted(c for c, g in grades.items() if g >= 1)
        if relevant:
            raise InputError(f"question {qid!r} has relevant chunks ({', '.join(relevant)}); grade them 0 first")
        if grades:
            rec["set_aside"] = {**rec.get("set_aside", {}), **grades}
        q["gold"] = []
        q["unanswerable"] = True
    elif not value and q.pop("unanswerable", None) and "set_aside" in rec:
        q["gold"] = rec.pop("set_aside")
    _settle(new, q, pending)
    return new


def apply_edit(doc: dict, qid: str, text: str, stamp: Stamp, *, seen: str | None = None) -> dict:
    """Rewrite a question's text. ``seen`` is the text the page showed: when the file holds
    another one (someone else edited it meanwhile), the edit is refused as a conflict, as a
    grade is."""
    text = " ".join(text.split())
    if not text:
        raise InputError("a question cannot be empty")
    new = _copy_for(doc, qid)
    q, _ = _find(new, qid)
    current = q.get("question")
    if seen is not None and current not in (seen, text):
        raise Conflict(f"the text of {qid!r} was changed meanwhile to {current!r}", current)
    q["question"] = text
    _record(new, qid, stamp)
    return new
