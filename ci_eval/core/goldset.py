"""The gold set: questions, the chunk ids that answer them, and the index they came from."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ci_eval.core.anchors import parse_anchors
from ci_eval.core.validate import problems_or_none
from ci_eval.errors import InputError, InputErrors


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    # (chunk id, grade) pairs in the order the file gives them; a binary list gives grade 1.
    gold: tuple[tuple[str, int], ...]
    tags: tuple[str, ...] = ()
    unanswerable: bool = False

    @property
    def gold_map(self) -> dict[str, int]:
        return dict(self.gold)


@dataclass(frozen=True)
class GoldSet:
    schema_version: int
    index_version: str | None
    questions: tuple[Question, ...]
    provenance: dict = field(default_factory=dict, hash=False, compare=False)
    # chunk id -> core.anchors.Anchor (schema version 2); empty for a set never anchored.
    anchors: dict = field(default_factory=dict, hash=False, compare=False)

    def by_id(self) -> dict[str, Question]:
        return {q.id: q for q in self.questions}


def _place(path: str, data: Any) -> str:
    """Name the question id next to its index, so users can find it in a long file."""
    if path.startswith("questions[") and isinstance(data, dict):
        index = path[len("questions[") : path.index("]")]
        questions = data.get("questions")
        if index.isdigit() and isinstance(questions, list) and int(index) < len(questions):
            item = questions[int(index)]
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                # The same shape as the semantic checks below: question 'q1' (questions[0]).gold
                head = f"questions[{index}]"
                return f"question {item['id']!r} ({head}){path[len(head):]}"
    return path


def parse_gold_set(data: Any, source: str) -> GoldSet:
    """Validate a parsed gold-set document and build a GoldSet, reporting every problem."""
    from ci_eval.schemas import load

    problems = problems_or_none(data, load("goldset"), source)
    for p in problems:
        p.place = _place(p.place or "", data)
    if problems:
        raise InputErrors([InputError(p.message, p.source, p.place) for p in problems])

    seen: dict[str, int] = {}
    questions = []
    for i, raw in enumerate(data["questions"]):
        qid = raw["id"]
        where = f"question {qid!r} (questions[{i}])"
        gold_raw = raw["gold"]
        gold = (
            tuple((g, 1) for g in gold_raw)
            if isinstance(gold_raw, list)
            else tuple((g, int(v)) for g, v in gold_raw.items())
        )
        unanswerable = bool(raw.get("unanswerable", False))
        if qid in seen:
            problems.append(
                InputError(f"duplicate question id (first at questions[{seen[qid]}])", source, where)
            )
        else:
            seen[qid] = i
        if isinstance(gold_raw, list) and len(set(gold_raw)) != len(gold_raw):
            dup = sorted({g for g in gold_raw if gold_raw.count(g) > 1})
            problems.append(InputError(f"gold lists {dup[0]!r} twice", source, f"{where}.gold"))
        if unanswerable and gold:
            problems.append(
                InputError(
                    "an unanswerable question must have no gold ids (gold: [])", source, f"{where}.gold"
                )
            )
        if not unanswerable and not any(grade > 0 for _, grade in gold):
            problems.append(
                InputError(
                    "an answerable question needs at least one gold id with a grade of 1 or more "
                    '(or mark it "unanswerable": true)',
                    source,
                    f"{where}.gold",
                )
            )
        questions.append(
            Question(
                id=qid,
                question=raw["question"],
                gold=gold,
                tags=tuple(raw.get("tags", ())),
                unanswerable=unanswerable,
            )
        )
    problems += _anchor_problems(data, source)
    if problems:
        raise InputErrors(problems)
    return GoldSet(
        schema_version=data["schema_version"],
        index_version=data.get("index_version"),
        questions=tuple(questions),
        provenance=dict(data.get("provenance") or {}),
        anchors=parse_anchors(data.get("anchors")),
    )


def _anchor_problems(data: dict, source: str) -> list[InputError]:
    """What the schema leaves to code: anchors exist from schema version 2, and a span is
    a doc with both ends."""
    anchors = data.get("anchors")
    if anchors is None:
        return []
    if data["schema_version"] < 2:
        return [InputError(f"a gold set with anchors needs schema_version 2, got {data['schema_version']}",
                           source, "schema_version")]
    return [InputError('a span needs "doc", "start" and "end" together', source, f"anchors.{cid}")
            for cid, a in anchors.items()
            if ("start" in a or "end" in a) and not {"doc", "start", "end"} <= set(a)]


def content_hash(raw: bytes) -> str:
    """sha256 of the file's bytes: what the artefact records to pin the exact gold set."""
    return hashlib.sha256(raw).hexdigest()
