"""Judgements in other tools' shapes: imported questions into a gold-set document, and a
gold set out as qrels, topics and BEIR rows.

Import keeps every judgement a source gives, grades included (0 and negative grades are
"judged not relevant", as in trec_eval), so exporting an imported set gives the same qrels.
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from dataclasses import dataclass

from ci_eval.core.text import one_line
from ci_eval.errors import InputError, InputErrors


@dataclass(frozen=True)
class Imported:
    """One question read from a source file, with where it was read."""

    id: str
    question: str
    gold: tuple[tuple[str, int], ...]  # (chunk id, grade) in the source's order
    source: str
    place: str
    tags: tuple[str, ...] = ()
    repeated: int = 0  # identical judgements the source gave more than once, kept once


@dataclass(frozen=True)
class ImportResult:
    document: dict  # the gold-set document to write
    added: int
    skipped: tuple[tuple[str, str], ...]  # (question id, why) left out on purpose
    repeated: int = 0  # identical judgements given twice in the sources, kept once
    origins: tuple[tuple[str, str], ...] = ()  # (source, place) of each added question


NOT_JUDGED = "no judgements"
ONLY_GRADE_ZERO = "no judgement of grade 1 or more"


def normalised_question(text: str) -> str:
    """Two questions are the same question when they differ only in case and spacing."""
    return " ".join(text.casefold().split())


def _gold_value(gold: tuple[tuple[str, int], ...]):
    # A set judged only 0/1 reads as today's binary list; any other grade keeps the grades.
    if all(grade == 1 for _, grade in gold):
        return [cid for cid, _ in gold]
    return dict(gold)


def _existing_places(existing: dict | None, existing_source: str | None):
    by_id, by_text = {}, {}
    for i, q in enumerate((existing or {}).get("questions", ())):
        place = (existing_source, f"question {q['id']!r} (questions[{i}])")
        by_id[q["id"]] = place
        by_text.setdefault(normalised_question(q["question"]), place)
    return by_id, by_text


_NEW_QUESTION = re.compile(r"question .* \(questions\[(\d+)\]\)(.*)", re.S)


def at_sources(problems, result: ImportResult, existing_count: int) -> list[InputError]:
    """Problems the gold-set check found in an imported document, moved from the document
    (``out.json:question 'q1' (questions[3]).gold``) to where each added question was read
    (``rows.jsonl:line 2.gold``); problems of questions that were already there stay."""
    out = []
    for p in problems:
        m = _NEW_QUESTION.fullmatch(p.place or "")
        i = int(m.group(1)) - existing_count if m else -1
        if 0 <= i < len(result.origins):
            source, place = result.origins[i]
            out.append(InputError(p.message, source, place + m.group(2)))
        else:
            out.append(p)
    return out


def _where(place: tuple[str, str]) -> str:
    return f"{place[0]}:{place[1]}"


def build_gold_document(questions, *, existing: dict | None = None, existing_source: str | None = None,
                        provenance: dict, index_version: str | None = None) -> ImportResult:
    """A gold-set document holding ``existing``'s questions (if any) and then ``questions``.

    A question id already taken, or a question whose normalised text is already there, is
    an error naming both places; a question with no judgements, or none of grade 1 or more,
    is skipped and listed in ``skipped`` (a gold
    set cannot hold it as answerable, and a qrels topic without a relevant document is not
    a question the user labelled unanswerable)."""
    by_id, by_text = _existing_places(existing, existing_source)
    problems, new, skipped, origins = [], [], [], []
    for q in questions:
        here = (q.source, q.place)
        if not q.gold:  # a topic nobody judged: no question to check against the others
            skipped.append((q.id, NOT_JUDGED))
            continue
        if q.id in by_id:
            problems.append(InputError(f"question id {q.id!r} is already used at {_where(by_id[q.id])}",
                                       q.source, q.place))
            continue
        text_key = normalised_question(q.question)
        if text_key in by_text:
            problems.append(InputError(f"the same question is already at {_where(by_text[text_key])}",
                                       q.source, q.place))
            continue
        by_id[q.id], by_text[text_key] = here, here
        if not any(grade >= 1 for _, grade in q.gold):
            skipped.append((q.id, ONLY_GRADE_ZERO))
            continue
        item = {"id": q.id, "question": q.question, "gold": _gold_value(q.gold)}
        if q.tags:
            item["tags"] = list(q.tags)
        new.append(item)
        origins.append(here)
    if problems:
        raise InputErrors(problems)
    document = copy.deepcopy(existing) if existing else {"schema_version": 1, "index_version": index_version}
    document["questions"] = [*document.get("questions", []), *new]
    # A new set is built by its import; a merged one keeps who built it and logs the import.
    prov = dict(document.get("provenance") or {}) if existing else {
        "built_by": provenance.get("by", ""), "built_at": provenance.get("at", ""),
        "method": provenance.get("method", "imported")}
    prov["imports"] = [*prov.get("imports", []), dict(provenance, questions=len(new))]
    document["provenance"] = prov
    return ImportResult(document, len(new), tuple(skipped), sum(q.repeated for q in questions),
                        tuple(origins))


def _trec_cannot_hold(text: str) -> str | None:
    # TREC readers (ours, trec_eval) split a line at any byte up to 32; Python's str.split
    # (ranx, pytrec_eval's loaders) at any Unicode space as well.
    for ch in text:
        if ord(ch) <= 32 or ch.isspace() or unicodedata.category(ch) == "Cc":
            return f"holds {unicodedata.name(ch, '').lower() or 'a control character'} ({ch!r})"
    return None


def _beir_cannot_hold(text: str) -> str | None:
    # BEIR's loader reads the tsv with csv.reader: a tab or a line break splits the row,
    # a leading double quote starts a quoted field.
    for ch in text:
        if unicodedata.category(ch) == "Cc":
            return f"holds a control character ({ch!r})"
    return "starts with a double quote" if text.startswith('"') else None


_CANNOT_HOLD = {"trec": ("TREC qrels and topics separate their columns by whitespace", _trec_cannot_hold),
                "beir": ("BEIR's qrels are tab-separated lines", _beir_cannot_hold)}


def unwritable_ids(gold, fmt: str, source: str) -> list[InputError]:
    """Every question or chunk id the format cannot hold as it is, at its place in the
    gold set. Ids are never escaped on export: trec_eval and the other readers of these
    files know no escape, so an escaped id would silently name another chunk there."""
    why_format, cannot_hold = _CANNOT_HOLD[fmt]
    problems = []
    for i, q in enumerate(gold.questions):
        where = f"question {q.id!r} (questions[{i}])"
        for what, text, place in [("question id", q.id, where),
                                  *(("chunk id", cid, f"{where}.gold") for cid, _ in q.gold)]:
            reason = cannot_hold(text)
            if reason:
                problems.append(InputError(f"cannot export {what} {text!r} as {fmt}: it {reason} "
                                           f"({why_format})", source, place))
    return problems


def qrels_text(gold) -> str:
    """TREC qrels (``qid 0 docid grade``), in gold-set order: what ``ci-eval evaluate``,
    trec_eval, ranx and pytrec_eval read."""
    return "".join(f"{q.id} 0 {cid} {grade}\n" for q in gold.questions for cid, grade in q.gold)


def topics_text(gold) -> str:
    """TREC topics as ``id<TAB>text`` lines, one per question (unanswerable ones too)."""
    return "".join(f"{q.id}\t{one_line(q.question, None)}\n" for q in gold.questions)


# What the SGML topics reader (gold/formats.py) takes for the structure: text holding one of
# these would end its topic or field early when read back, and SGML readers know no escape.
_SGML_TAG = re.compile(r"</?(?:top|num|title|desc|narr)>", re.I)


def sgml_cannot_hold(gold, source: str) -> list[InputError]:
    """Every question id or text that would be read back from SGML topics as structure."""
    problems = []
    for i, q in enumerate(gold.questions):
        for what, text in (("question id", q.id), ("question text", q.question)):
            tag = _SGML_TAG.search(text)
            if tag:
                problems.append(InputError(f"cannot export the {what} as SGML topics: it holds {tag.group(0)!r}, "
                                           "which a reader takes for the end of a topic or a field (use --topics tsv)",
                                           source, f"question {q.id!r} (questions[{i}])"))
    return problems


def topics_sgml(gold) -> str:
    """TREC topics in SGML, one ``<top>`` per question, its text on one line between
    ``<title>`` and ``</title>`` (the layout of the Vaswani and Terrier topic files, which
    TREC-style readers and ours read back)."""
    return "".join(f"<top>\n<num>{q.id}</num><title>\n{one_line(q.question, None)}\n</title>\n</top>\n"
                   for q in gold.questions)


def beir_queries(gold) -> str:
    return "".join(json.dumps({"_id": q.id, "text": q.question}, ensure_ascii=False) + "\n"
                   for q in gold.questions)


def beir_qrels(gold) -> str:
    rows = "".join(f"{q.id}\t{cid}\t{grade}\n" for q in gold.questions for cid, grade in q.gold)
    return "query-id\tcorpus-id\tscore\n" + rows
