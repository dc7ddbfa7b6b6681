"""The gold set: questions, the chunk ids that answer them, and the index they came from."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from ci_eval.core.gold.anchors import parse_anchors
from ci_eval.core.gold.evidence import Evidence, evidence_problems, parse_evidence
from ci_eval.core.limits import (
    MAX_ID_BYTES,
    MAX_JUDGED,
    MAX_QUESTION_CHARS,
    MAX_QUESTION_ID_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TAGS_PER_QUESTION,
)
from ci_eval.core.validate import problems_or_none
from ci_eval.errors import InputError, InputErrors


@dataclass(frozen=True, slots=True)  # slots: a million of them in a large gold set
class Question:
    id: str
    question: str
    # (chunk id, grade) pairs in the order the file gives them; a binary list gives grade 1.
    gold: tuple[tuple[str, int], ...]
    tags: tuple[str, ...] = ()
    unanswerable: bool = False
    # Evidence named in the documents (core/gold/evidence.py): resolved against the index
    # into chunk judgements (merged into ``gold``) before a run measures the question.
    evidence: tuple[Evidence, ...] = ()

    @property
    def gold_map(self) -> dict[str, int]:
        return dict(self.gold)

    def stale_ids(self, index_ids) -> list[str]:
        """Gold ids missing from the index, sorted; none when the index is unknown (None)."""
        if index_ids is None:
            return []
        return sorted({g for g, _ in self.gold if g not in index_ids})


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


def _question_problems(raw: Any, i: int, seen: dict, source: str) -> list[InputError]:
    """The checks the schema cannot express, on one question that has the fields they read
    (the others have their shape problems from the schema: both are reported at once)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        return []
    qid, gold_raw = raw["id"], raw.get("gold")
    if (type(gold_raw) is list and "evidence" not in raw and gold_raw and qid not in seen and raw.get("unanswerable") is not True
            and set(map(type, gold_raw)) == _STR and len(set(gold_raw)) == len(gold_raw)):
        seen[qid] = i  # the common case, a new answerable question with distinct gold ids
        return []
    where = f"question {qid!r} (questions[{i}])"
    problems = evidence_problems(raw.get("evidence"), source, where)
    if qid in seen:
        problems.append(InputError(f"duplicate question id (first at questions[{seen[qid]}])", source, where))
    else:
        seen[qid] = i
    if isinstance(gold_raw, list) and all(isinstance(g, str) for g in gold_raw):
        grades = [1] * len(gold_raw)
        dup = sorted({g for g in gold_raw if gold_raw.count(g) > 1})
        if dup:
            problems.append(InputError(f"gold lists {dup[0]!r} twice", source, f"{where}.gold"))
    elif isinstance(gold_raw, dict) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                            for v in gold_raw.values()):
        grades = list(gold_raw.values())
    else:
        return problems  # a gold or a grade of the wrong type: the schema said so
    unanswerable = raw.get("unanswerable", False) is True
    evidence = raw.get("evidence") if isinstance(raw.get("evidence"), list) else []
    if unanswerable and (gold_raw or evidence):
        problems.append(InputError("an unanswerable question must have no gold ids (gold: []) and no evidence",
                                   source, f"{where}.gold" if gold_raw else f"{where}.evidence"))
    evidence_grades = [e.get("grade", 1) for e in evidence if isinstance(e, dict)]
    if not unanswerable and not any(grade > 0 for grade in grades + evidence_grades):
        problems.append(InputError(
            "an answerable question needs at least one gold id or piece of evidence with a grade of 1 or "
            'more (or mark it "unanswerable": true)', source, f"{where}.gold"))
    return problems


def _question(raw: dict, names: dict) -> Question:
    gold_raw = raw["gold"]
    gold = (
        tuple(zip(map(names.setdefault, gold_raw, gold_raw), repeat(1)))
        if isinstance(gold_raw, list)
        else tuple((names.setdefault(g, g), int(v)) for g, v in gold_raw.items())
    )
    tags = tuple(names.setdefault(t, t) for t in raw.get("tags", ()))
    return Question(id=raw["id"], question=raw["question"], gold=gold, tags=tags,
                    unanswerable=bool(raw.get("unanswerable", False)), evidence=parse_evidence(raw.get("evidence")))


_STR = {str}
_QUESTION_KEYS = frozenset({"id", "question", "gold", "tags", "unanswerable", "notes"})


def _text(value, longest: int) -> bool:
    return type(value) is str and 1 <= len(value) <= longest


# Measured (benchmarks/bench_mechanisms.py): with jsonschema deciding each question instead,
# run took 2.45x the wall and the action 1.84x, at 100,000 questions.
def _question_valid(raw) -> bool:
    """True only when the schema surely accepts ``raw`` as a question, in straight-line
    code (a few microseconds, where the general check takes tens); False sends the
    document to the general check, which words the problem."""
    if type(raw) is not dict or not _QUESTION_KEYS.issuperset(raw):
        return False
    qid, text, gold = raw.get("id"), raw.get("question"), raw.get("gold")
    if not (type(qid) is str and 0 < len(qid) <= MAX_QUESTION_ID_CHARS and type(text) is str
            and 0 < len(text) <= MAX_QUESTION_CHARS):
        return False
    if type(gold) is list:
        if len(gold) > MAX_JUDGED or gold and (set(map(type, gold)) != _STR or not all(gold)
                                               or max(map(len, gold)) > MAX_ID_BYTES):
            return False
    elif type(gold) is dict:
        if len(gold) > MAX_JUDGED or not all(_text(g, MAX_ID_BYTES) and type(v) is int and -1000 <= v <= 1000
                                             for g, v in gold.items()):
            return False
    else:
        return False
    tags = raw.get("tags", ())
    if not (type(tags) in (list, tuple) and len(tags) <= MAX_TAGS_PER_QUESTION
            and all(_text(t, MAX_TAG_CHARS) for t in tags)):
        return False
    return type(raw.get("unanswerable", False)) is bool and type(raw.get("notes", "")) is str


_SHELLS: dict[int, dict] = {}


def _shell(schema: dict) -> dict:
    """The gold-set schema without the check of each question (done by _question_valid)."""
    shell = _SHELLS.get(id(schema))
    if shell is None:
        rows = schema["properties"]["questions"]
        shell = _SHELLS[id(schema)] = {**schema, "properties": {
            **schema["properties"], "questions": {k: v for k, v in rows.items() if k != "items"}}}
    return shell


def _shape_problems(data: Any, schema: dict, source: str) -> list:
    """The schema's verdict: the document without its questions by jsonschema's check
    and the questions by ``_question_valid``; the general check only when either fails."""
    from ci_eval.core.validate import schema_valid

    questions = data.get("questions") if isinstance(data, dict) else None
    if isinstance(questions, list):
        if schema_valid(data, _shell(schema)) and all(_question_valid(q) for q in questions):
            return []
    return problems_or_none(data, schema, source)


# What one question may hold, each list bounded (core/limits.py: the artefact's bounds too).
_BOUNDED = (("tags", MAX_TAGS_PER_QUESTION, "tags"), ("gold", MAX_JUDGED, "judged chunks"),
            ("evidence", MAX_JUDGED, "pieces of evidence"))


def bound_problems(data: Any, source: str) -> list[InputError]:
    """A question's lists past their bounds, and more distinct tags than MAX_TAGS, each at
    its place: looked at by their lengths alone, before any check walks their items (one
    question of a million tags held `run` for a minute and a gigabyte). A gold set past a
    bound is refused by its bounds alone."""
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, list):
        return []
    problems, tags = [], set()
    for i, raw in enumerate(questions):
        if not isinstance(raw, dict):
            continue
        for key, limit, what in _BOUNDED:
            value = raw.get(key)
            if isinstance(value, (list, dict)) and len(value) > limit:
                problems.append(InputError(f"holds {len(value):,} {what}, over the limit of {limit:,} a question",
                                           source, _place(f"questions[{i}].{key}", data)))
        own = raw.get("tags")
        if isinstance(own, list) and len(own) <= MAX_TAGS_PER_QUESTION:
            tags.update(t for t in own if isinstance(t, str))
    if len(tags) > MAX_TAGS:
        problems.append(too_many_tags(len(tags), source))
    return problems


def too_many_tags(count: int, source: str) -> InputError:
    return InputError(f"names {count:,} distinct tags, over the limit of {MAX_TAGS:,} (the comparison "
                      "tests each tag on each metric)", source, "questions[*].tags")


def parse_gold_set(data: Any, source: str) -> GoldSet:
    """Validate a parsed gold-set document and build a GoldSet, reporting every problem:
    shape problems and the semantic ones (answerable without gold, duplicates) together."""
    from ci_eval.schemas import load

    bounds = bound_problems(data, source)
    if bounds:
        raise InputErrors(bounds)
    shape = [InputError(p.message, p.source, _place(p.place or "", data))
             for p in _shape_problems(data, load("goldset"), source)]
    problems = list(shape)
    raw_questions = data.get("questions") if isinstance(data, dict) else None
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_questions if isinstance(raw_questions, list) else []):
        problems += _question_problems(raw, i, seen, source)
    if not shape:  # the anchor checks read the document's shape as the schema describes it
        problems += _anchor_problems(data, source)
    if problems:
        raise InputErrors(problems)
    # one string for each chunk id and tag however many questions name it
    return _gold_set(data, tuple(_question(raw, names) for names in [{}] for raw in data["questions"]))


def _gold_set(data: dict, questions: tuple[Question, ...]) -> GoldSet:
    return GoldSet(
        schema_version=data["schema_version"],
        index_version=data.get("index_version"),
        questions=questions,
        provenance=dict(data.get("provenance") or {}),
        anchors=parse_anchors(data.get("anchors")),
    )


class GoldSetBuilder:
    """A gold set built a question at a time while its file is decoded (so a million
    questions are never alive as parsed JSON at once), accepting only what parse_gold_set
    accepts without a problem. ``add`` returning False, or ``finish`` returning None, means
    the document has a problem: the caller hands the whole document to parse_gold_set,
    which words every problem at once, exactly as for a document read whole."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._names: dict[str, str] = {}
        self._questions: list[Question] = []
        self._tags: set[str] = set()

    def add(self, raw: Any) -> bool:
        """One element of the ``questions`` list, in file order."""
        if not _question_valid(raw):
            return False
        qid, gold, seen, names = raw["id"], raw["gold"], self._seen, self._names
        if (type(gold) is list and gold and qid not in seen and raw.get("unanswerable") is not True
                and (len(gold) == 1 or len(set(gold)) == len(gold))):
            # the common case, checked here once (what _question_problems and _question
            # would find and build): a new answerable question with distinct gold ids
            seen[qid] = len(self._questions)
            tags = raw.get("tags")
            if tags:
                self._tags.update(tags)
            self._questions.append(Question(qid, raw["question"], tuple(zip(map(names.setdefault, gold, gold), repeat(1))),
                                            tuple(map(names.setdefault, tags, tags)) if tags else (), False))
            return True
        if _question_problems(raw, len(self._questions), seen, ""):
            return False
        self._questions.append(_question(raw, names))
        self._tags.update(self._questions[-1].tags)
        return True

    def finish(self, head: dict) -> GoldSet | None:
        """The gold set, given every top-level key but ``questions``; None when those keys
        have a problem."""
        from ci_eval.core.validate import schema_valid
        from ci_eval.schemas import load

        document = {**head, "questions": []}  # the shell check does not look into the questions
        if len(self._tags) > MAX_TAGS or not schema_valid(document, _shell(load("goldset"))) or _anchor_problems(document, ""):
            return None
        return _gold_set(document, tuple(self._questions))


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
