"""Candidate questions written by a model from the index's own chunks, before a person.

A generated question carries the chunk it was written from as a *proposed* grade-2 judgement:
shown to the person as a suggestion, never written into the gold set as a judgement (only a
person's keep and grade are). The chunks are sampled across documents (one chunk of each
document in turn, each document's chunks and the documents in a seeded shuffle), so fifty
questions do not all come from the first manual.

Before a person sees them, generated questions are filtered:
- a question that *copies* its chunk (half or more of its word 3-shingles, the anchors'
  shingles, appear in the chunk) is dropped: such questions are the easy ones that score far
  above real users' questions;
- a near-duplicate of an earlier generated question or of a question the gold set holds
  (term-set similarity as ``ci-eval gold mine`` folds them) is dropped;
- a question over the gold set's length bound (core/limits.MAX_QUESTION_CHARS) is dropped, as the
  candidates file holding it would be refused whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ci_eval.core.gold.candidates import normalise
from ci_eval.core.gold.fingerprint import shingles
from ci_eval.core.gold.mining import stratified, terms
from ci_eval.core.limits import MAX_QUESTION_CHARS
from ci_eval.core.text import mend_surrogates

PROPOSED_GRADE = 2
COPY_SHARE = 0.5


@dataclass(frozen=True)
class Source:
    id: str
    doc: str
    text: str


@dataclass(frozen=True)
class Generated:
    question: str
    source: str  # the chunk id it was written from
    dropped: str | None = None  # why a person will not see it, or None


class Malformed(ValueError):
    """A generator's answer that holds no list of questions."""


def sample_sources(chunks: Sequence[Source], count: int, seed: int) -> list[Source]:
    by_doc: dict[str, list[Source]] = {}
    for c in chunks:
        by_doc.setdefault(c.doc, []).append(c)
    return stratified(by_doc, count, seed)


def prompt(template: str, source: Source, per_chunk: int) -> str:
    # str.replace, not str.format: the template's JSON example holds braces of its own.
    return template.replace("{count}", str(per_chunk)).replace("{text}", source.text)


def parse_questions(content: str) -> list[str]:
    """The questions of a model's answer: ``{"questions": [...]}``, a bare JSON list, or the
    same inside a markdown code fence (local models add one)."""
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`").split("\n", 1)[-1] if "\n" in text else text.strip("`")
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise Malformed("no JSON in the answer")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError as exc:
        raise Malformed(f"the answer's JSON does not parse ({exc})") from None
    except RecursionError:
        raise Malformed("the answer's JSON is nested too deeply") from None
    items = value.get("questions") if isinstance(value, dict) else value
    if not isinstance(items, list) or not all(isinstance(q, str) for q in items):
        raise Malformed('expected {"questions": ["...", ...]}')
    # a "\ud83d" escape alone in the answer's JSON is no character: mended, so it can be written
    return [mend_surrogates(" ".join(q.split())) for q in items if q.strip()]


def copies(question: str, chunk_text: str) -> bool:
    own = set(shingles(question))
    if not own:
        return False
    theirs = set(shingles(chunk_text))
    return len(own & theirs) / len(own) >= COPY_SHARE


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def screen(items: Sequence[tuple[str, Source]], known: Sequence[str], threshold: float) -> list[Generated]:
    """Every generated question with the reason it is dropped, if it is. Questions are few
    (one request each), so the pairwise comparison is direct, not banded."""
    kept_sets: list[set] = [set(terms(k)) for k in (normalise(t) for t in known) if k]
    gold_count = len(kept_sets)
    out = []
    for question, source in items:
        too_long = len(question) > MAX_QUESTION_CHARS  # the candidates reader would refuse the whole file
        key = "" if too_long else normalise(question)
        mine = set(terms(key)) if key else set()
        if too_long:
            why = f"longer than {MAX_QUESTION_CHARS:,} characters"
        elif not key:
            why = "empty"
        elif copies(question, source.text):
            why = "copies its chunk"
        else:
            near = next((i for i, s in enumerate(kept_sets) if _jaccard(mine, s) >= threshold), None)
            why = None if near is None else "near a gold question" if near < gold_count else "near-duplicate"
        if why is None:
            kept_sets.append(mine)
        out.append(Generated(question, source.id, why))
    return out
