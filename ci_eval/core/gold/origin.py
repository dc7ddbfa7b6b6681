"""Where a kept question came from, and the metric by origin without anyone tagging.

Questions written from a document reuse its words and score far higher than the ones users
type (docs/question-set.md). A gold set that mixes mined, generated and hand-written
questions therefore needs to say which is which, long after the person who kept them has
forgotten. Candidates files carry an ``origin`` per line, and keeping one on the labelling
page records it under ``provenance.judgements[id].origin``:

- mined (`ci-eval gold mine`): ``{"kind": "mined", "log": path, "frequency": n}``;
- generated (`ci-eval gold generate`): ``{"kind": "generated", "model": ..., "prompt": ...,
  "source": chunk id}``, the prompt named by a digest of its text (its version: a changed
  prompt is another one).

A run then tags each question ``origin:mined``, ``origin:generated`` or, for the others,
``origin:written``, so the comment's tag rows show the headline metric by origin. Only a
gold set that records some origin gets these tags: one without any is left as it was.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

MINED, GENERATED, WRITTEN = "mined", "generated", "written"
TAG_PREFIX = "origin:"
# An origin comes from a candidates file anyone can edit: only short plain values are kept.
_MAX_VALUE = 500


def mined_origin(log: str, frequency: int) -> dict:
    return {"kind": MINED, "log": log, "frequency": frequency}


def generated_origin(model: str, prompt: str | None, source: str) -> dict:
    """``prompt`` None: a generator command, which writes its own prompt."""
    out = {"kind": GENERATED, "model": model, "prompt": prompt, "source": source}
    return {k: v for k, v in out.items() if v is not None}


def prompt_version(template: str) -> str:
    """A prompt's version: the first 12 hex digits of its text's sha256."""
    return "sha256:" + hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]


def clean_origin(raw) -> dict | None:
    """A candidate line's ``origin`` as the gold set will keep it: an object with a known
    ``kind``, only its short string and whole-number values; None otherwise."""
    if not isinstance(raw, dict) or raw.get("kind") not in (MINED, GENERATED):
        return None
    return {k: v for k, v in raw.items() if isinstance(k, str) and len(k) <= 40
            and ((isinstance(v, str) and len(v) <= _MAX_VALUE) or (isinstance(v, int) and not isinstance(v, bool)))}


def origin_kind(provenance: dict, qid: str) -> str | None:
    record = ((provenance or {}).get("judgements") or {}).get(qid)
    origin = record.get("origin") if isinstance(record, dict) else None
    kind = origin.get("kind") if isinstance(origin, dict) else None
    return kind if kind in (MINED, GENERATED) else None


def with_origin_tags(gold):
    """``gold`` (a GoldSet) with each question tagged by its origin, when any question
    records one; unchanged otherwise."""
    if not ((gold.provenance or {}).get("judgements") or {}):
        return gold  # no judgement recorded, so no origin: not a question to look at
    kinds = {q.id: origin_kind(gold.provenance, q.id) for q in gold.questions}
    if not any(kinds.values()):
        return gold
    questions = []
    for q in gold.questions:
        tag = TAG_PREFIX + (kinds[q.id] or WRITTEN)
        questions.append(q if tag in q.tags else replace(q, tags=(*q.tags, tag)))
    return replace(gold, questions=tuple(questions))
