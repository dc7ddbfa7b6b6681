"""Gold anchored in the documents: evidence named by document span or by quoted text,
resolved against the current index's chunks (see docs/span-gold.md).

The resolution rule. A chunk is relevant at the highest grade of the evidence it *covers*,
where a chunk covers a piece of evidence when their overlap is at least half the evidence
or at least half the chunk (``SHARE``). Either share alone fails at one end of the chunk
sizes people try: by share of the evidence only, a long passage cut into small chunks has
no relevant chunk at all (none holds half of it); by share of the chunk only, a short
quote inside a large chunk never makes that chunk relevant, though it holds the whole
answer. With both, a chunk is relevant when it holds most of the evidence or is mostly
evidence, and evidence inside contiguously chunked text always has at least one
relevant chunk (a chunk holding half of it, or one inside it).

A quote resolves to its first occurrence in the document's text as the manifest's chunks
give it (each chunk's ``text`` placed at its ``start``): to pin a later occurrence, quote
more of it or give the span. A quote not found, or a document the index no longer has, is
stale gold, as a missing chunk id is: it stands in the question's gold under a name no
chunk has (``evidence:...``), so the run lists it among the stale ids and a question left
with nothing else relevant is reported stale, not scored 0.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from ci_eval.core.limits import MAX_JUDGED
from ci_eval.errors import InputError, InputErrors

# Of the evidence, or of the chunk: the overlap that makes a chunk cover a piece of evidence.
SHARE = 0.5
STALE_PREFIX = "evidence:"
_KEYS = frozenset({"doc", "start", "end", "quote", "grade"})
_SHOWN = 60  # characters of a stale quote shown in its name


@dataclass(frozen=True, slots=True)
class Evidence:
    """One piece of evidence: a span of ``doc`` (``start``..``end``, end exclusive) or a
    ``quote`` of it (its span None until resolved), at ``grade``."""

    doc: str
    start: int | None = None
    end: int | None = None
    grade: int = 1
    quote: str | None = None

    @property
    def label(self) -> str:
        """The name it stands under in the gold when it is stale."""
        if self.quote is not None:
            if len(self.quote) <= _SHOWN:
                return f"{STALE_PREFIX}{self.doc}:{self.quote!r}"
            # a long quote is named by its start and a digest: the name lands in every
            # row and report that lists stale gold, and the artefact's size is bounded
            digest = hashlib.sha256(self.quote.encode()).hexdigest()[:12]
            return f"{STALE_PREFIX}{self.doc}:{self.quote[:_SHOWN]!r}...#{digest}"
        return f"{STALE_PREFIX}{self.doc}@{self.start}-{self.end}"

    def as_written(self) -> dict:
        """The gold-set entry (the quote kept as written, not its resolved span)."""
        where = {"quote": self.quote} if self.quote is not None else {"start": self.start, "end": self.end}
        return {"doc": self.doc, **where, "grade": self.grade}


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def evidence_problems(raw: Any, source: str, where: str) -> list[InputError]:
    """What the schema leaves to code, for one question's ``evidence`` list."""
    if not isinstance(raw, list):
        return []
    problems = []
    for i, item in enumerate(raw):
        place = f"{where}.evidence[{i}]"
        if not isinstance(item, dict) or not _KEYS.issuperset(item) or not isinstance(item.get("doc"), str):
            continue  # the schema words these
        has_span = "start" in item or "end" in item
        if has_span and "quote" in item:
            problems.append(InputError('give "start" and "end", or "quote", not both', source, place))
        elif has_span and not ("start" in item and "end" in item):
            problems.append(InputError('a span needs "start" and "end" together', source, place))
        elif has_span and _whole(item.get("start")) and _whole(item.get("end")) and item["end"] <= item["start"]:
            problems.append(InputError(f'"end" ({item["end"]}) must be after "start" ({item["start"]})',
                                       source, f"{place}.end"))
        elif not has_span and "quote" not in item:
            problems.append(InputError('a piece of evidence needs "start" and "end", or "quote"', source, place))
    return problems


def parse_evidence(raw: list | None) -> tuple[Evidence, ...]:
    """A validated ``evidence`` list -> Evidence (grade 1 when none is given)."""
    return tuple(Evidence(e["doc"], e.get("start"), e.get("end"), int(e.get("grade", 1)), e.get("quote"))
                 for e in raw or ())


# --------------------------------------------------------------------------- resolution


def covers(chunk_start: int, chunk_end: int, start: int, end: int) -> bool:
    """The resolution rule: the overlap is at least SHARE of the evidence or of the chunk."""
    overlap = min(chunk_end, end) - max(chunk_start, start)
    if overlap <= 0:
        return False
    return overlap >= SHARE * (end - start) or overlap >= SHARE * (chunk_end - chunk_start)


def document_text(chunks) -> str:
    """A document's text as its chunks give it, each chunk's text at its start; a
    character no chunk gives is NUL, so no quote is found across a gap."""
    known = [c for c in chunks if c.text is not None and c.start is not None]
    if not known:
        return ""
    size = max(c.start + len(c.text) for c in known)
    chars = ["\0"] * size
    for c in known:
        chars[c.start:c.start + len(c.text)] = c.text
    return "".join(chars)


@dataclass(frozen=True)
class Resolution:
    """A gold set resolved against one index: the gold set to measure (each question's
    gold the chunk judgements its evidence gives, with its chunk ids, and its stale
    evidence under STALE_PREFIX names), and the stale evidence by question id."""

    gold: Any  # core.gold.goldset.GoldSet
    stale: dict


def _index_problems(questions, index, source: str) -> list[InputError]:
    """Span gold needs chunks that say where they are; quotes need their text too."""
    if index is None:
        return [InputError("the gold set names evidence by document span or quote: give the index manifest "
                           "([index] manifest or callable) with doc, start and end for each chunk", source, "index")]
    wanted = {e.doc for q in questions for e in q.evidence}
    by_doc = index.of_docs(wanted)
    problems = []
    if not any(c.has_span for c in index.chunks.values()):
        return [InputError("span gold needs doc, start and end for each chunk, and no chunk of this manifest "
                           "gives them", index.source, "chunks")]
    for doc in sorted(by_doc):
        unplaced = [c.id for c in by_doc[doc] if c.start is None]
        if unplaced:
            problems.append(InputError(f"chunk {unplaced[0]!r} of document {doc!r} has no start and end "
                                       "(span gold needs them)", index.source, f"chunk {unplaced[0]!r}"))
    quoted = sorted({e.doc for q in questions for e in q.evidence if e.quote is not None and e.doc in by_doc})
    for doc in quoted:
        for c in by_doc[doc]:
            if c.text is not None and c.start is not None and len(c.text) != c.end - c.start:
                problems.append(InputError(
                    f"chunk {c.id!r}: its text is {len(c.text)} characters but its span {c.start}..{c.end} "
                    f"is {c.end - c.start} (a quote is found in the text at the span)", index.source,
                    f"chunk {c.id!r}"))
                break
        else:
            if all(c.text is None for c in by_doc[doc]):
                problems.append(InputError(f"a quote names document {doc!r} but no chunk of it gives its text",
                                           index.source, "text"))
    return problems


def _past_the_end(questions, by_doc: dict, source: str) -> list[InputError]:
    """A span past its document's end (as far as the index's chunks reach) names characters
    that do not exist: counted, they would make the whole document retrieved score below 1,
    and a span wholly past it would score 0 as if it were a miss. Each at its place."""
    ends = {doc: max((c.end for c in chunks if c.end is not None), default=0) for doc, chunks in by_doc.items()}
    problems = []
    for i, q in enumerate(questions):
        for j, e in enumerate(q.evidence):
            if e.quote is None and e.doc in ends and e.end is not None and e.end > ends[e.doc]:
                problems.append(InputError(
                    f"the span {e.start}..{e.end} runs past the end of document {e.doc!r}, which has "
                    f"{ends[e.doc]:,} characters in the index", source,
                    f"question {q.id!r} (questions[{i}]).evidence[{j}].end"))
    return problems


def resolve(gold, index, source: str) -> Resolution:
    """The gold set with every question's evidence resolved to chunk judgements of
    ``index`` (a core.gold.manifest.ChunkIndex, or None); a gold set without evidence
    comes back as it is. InputErrors when the index cannot place the evidence."""
    questions = [q for q in gold.questions if q.evidence]
    if not questions:
        return Resolution(gold, {})
    problems = _index_problems(questions, index, source)
    if problems:
        raise InputErrors(problems)
    by_doc = index.of_docs({e.doc for q in questions for e in q.evidence})
    past = _past_the_end(gold.questions, by_doc, source)
    if past:
        raise InputErrors(past)
    texts = {doc: document_text(by_doc[doc]) for doc in {e.doc for q in questions for e in q.evidence
                                                         if e.quote is not None and e.doc in by_doc}}
    stale: dict[str, list[str]] = {}
    resolved, over = [], []
    for q in gold.questions:
        if not q.evidence:
            resolved.append(q)
            continue
        placed, grades, gone = [], dict(q.gold), []
        for e in q.evidence:
            if e.doc not in by_doc:
                gone.append(e)
                continue
            if e.quote is not None:
                at = texts[e.doc].find(e.quote)
                if at < 0:
                    gone.append(e)
                    continue
                e = replace(e, start=at, end=at + len(e.quote))
            placed.append(e)
            for c in by_doc[e.doc]:
                if covers(c.start, c.end, e.start, e.end):
                    grades[c.id] = max(grades.get(c.id, e.grade), e.grade)
        # A chunk of a document the evidence names that covers none of it is judged not
        # relevant (grade 0): the labeller read that document and marked where the answer
        # is, so the rest of it was seen and is not the answer. Chunks of other documents
        # stay unjudged (judged@k): nobody said anything of them.
        for doc in {e.doc for e in placed}:
            for c in by_doc[doc]:
                grades.setdefault(c.id, 0)
        for e in gone:
            grades.setdefault(e.label, e.grade)
        if gone:
            stale[q.id] = [e.label for e in gone]
        if len(grades) > MAX_JUDGED:  # the artefact's bound: `compare` would refuse what `run` wrote
            over.append(InputError(f"its gold and evidence judge {len(grades):,} chunks, over the limit of "
                                   f"{MAX_JUDGED:,} a question", source, f"question {q.id!r}.evidence"))
        resolved.append(replace(q, gold=tuple(grades.items()), evidence=tuple(placed)))
    if over:
        raise InputErrors(over)
    return Resolution(replace(gold, questions=tuple(resolved)), stale)


def ranked_spans(ids, chunks) -> list:
    """The ``(doc, start, end)`` of each ranked id (None when the index gives no span)."""
    out = []
    for cid in ids:
        c = chunks.get(cid)
        out.append((c.doc, c.start, c.end) if c is not None and c.has_span and c.end is not None else None)
    return out


def evidence_table(questions, rankings, chunks):
    """The core.measure.coverage.EvidenceTable of resolved ``questions`` and their
    ``rankings`` (id sequences), the chunks' spans from ``chunks`` (id -> Chunk)."""
    from ci_eval.core.measure.coverage import EvidenceTable

    return EvidenceTable([[(e.doc, e.start, e.end, e.grade) for e in q.evidence] for q in questions],
                         [ranked_spans(ids, chunks) for ids in rankings])
