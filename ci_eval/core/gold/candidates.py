"""Candidate questions (mined from logs or written by a generator) before anyone judges them.

Keeping is fast and writing is slow: a person keeps or bins each candidate. A kept question
gets an id derived from its normalised text, so the same candidate file read twice (or in
another order) gives the same ids, and a resumed session knows what was already decided.
A candidate whose normalised text equals an existing question's is flagged as a
near-duplicate, not dropped: the person decides. Candidates with equal normalised text are
one candidate (they share the id), shown once with the first spelling.
"""

from __future__ import annotations

import copy
import hashlib
import re
import unicodedata
from dataclasses import dataclass

from ci_eval.core.gold.judgement import Stamp
from ci_eval.errors import InputError

ID_PREFIX = "c-"
_NON_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Case, accents' composed forms, punctuation and spacing do not make a new question."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NON_WORD.sub(" ", folded).split())


def candidate_id(text: str) -> str:
    return ID_PREFIX + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Candidate:
    id: str
    question: str
    duplicate_of: str | None  # the id of the existing question it repeats
    decided: str | None  # "kept", "binned" or None


def _all_questions(doc: dict) -> list[dict]:
    return list(doc.get("questions", [])) + list(doc.get("provenance", {}).get("pending", []))


def review(texts: list[str], doc: dict) -> list[Candidate]:
    """The candidates in file order with their ids, duplicate flags and earlier decisions."""
    ids = {q.get("id") for q in _all_questions(doc)}
    binned = doc.get("provenance", {}).get("binned", {})
    seen: dict[str, str] = {}
    for q in _all_questions(doc):
        seen.setdefault(normalise(q.get("question", "")), q.get("id"))
    out = []
    for text in texts:
        cid = candidate_id(text)
        if any(c.id == cid for c in out):
            continue  # the very same candidate twice in the file: once is enough
        decided = "kept" if cid in ids else "binned" if cid in binned else None
        key = normalise(text)
        earlier = seen.get(key)
        out.append(Candidate(cid, text, earlier if earlier != cid else None, decided))
    return out


def apply_keep(doc: dict, text: str, stamp: Stamp, origin: dict | None = None) -> dict:
    """Add a kept candidate as a pending question (it has no judged chunk yet), with where
    it came from when the candidates file said (core/gold/origin.py)."""
    text = " ".join(text.split())
    if not text:
        raise InputError("a question cannot be empty")
    cid = candidate_id(text)
    new = copy.deepcopy(doc)
    if any(q.get("id") == cid for q in _all_questions(new)):
        return new
    prov = new.setdefault("provenance", {})
    prov.get("binned", {}).pop(cid, None)
    if "binned" in prov and not prov["binned"]:
        del prov["binned"]
    prov.setdefault("pending", []).append({"id": cid, "question": text, "gold": {}})
    rec = prov.setdefault("judgements", {}).setdefault(cid, {})
    rec.update({"by": stamp.judge, "at": stamp.at, "kept": True})
    if origin:
        rec["origin"] = dict(origin)
    return new


def apply_bin(doc: dict, text: str, stamp: Stamp) -> dict:
    cid = candidate_id(text)
    new = copy.deepcopy(doc)
    if any(q.get("id") == cid for q in _all_questions(new)):
        raise InputError(f"candidate {cid!r} is already kept")
    prov = new.setdefault("provenance", {})
    prov.setdefault("binned", {})[cid] = {"question": text, "by": stamp.judge, "at": stamp.at}
    return new


def apply_undecide(doc: dict, cid: str) -> dict:
    """Take back a keep or a bin: the candidate is undecided again. A kept question someone
    has judged chunks for is not taken back (those judgements would go with it)."""
    new = copy.deepcopy(doc)
    prov = new.setdefault("provenance", {})
    if cid in prov.get("binned", {}):
        del prov["binned"][cid]
        if not prov["binned"]:
            del prov["binned"]
        return _without_empty_provenance(new)
    pending = prov.get("pending", [])
    kept = [q for q in pending if q.get("id") == cid]
    record = prov.get("judgements", {}).get(cid, {})
    if not kept or not record.get("kept") or record.get("chunks") or kept[0].get("gold"):
        if any(q.get("id") == cid for q in _all_questions(new)):
            raise InputError(f"candidate {cid!r} is a question with judgements now; it stays kept")
        raise InputError(f"candidate {cid!r} is neither kept nor binned")
    pending.remove(kept[0])
    if not pending:
        del prov["pending"]
    del prov["judgements"][cid]
    if not prov["judgements"]:
        del prov["judgements"]
    return _without_empty_provenance(new)


def _without_empty_provenance(doc: dict) -> dict:
    if not doc.get("provenance", True):
        del doc["provenance"]
    return doc
