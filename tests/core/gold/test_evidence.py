"""Span gold resolved against an index: the resolution rule, quotes, stale evidence, the
manifest problems it reports, and evidence recall the same at every chunk size."""

from __future__ import annotations

import random

import pytest

from ci_eval.core.gold.evidence import SHARE, covers, evidence_table, resolve
from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.core.gold.manifest import build_index
from ci_eval.core.measure.metrics import build_table, compute_table
from ci_eval.errors import InputErrors

DOC = "".join(random.Random(7).choice("abcdefghij ") for _ in range(1200))


def _cut(size: int, stride: int | None = None, *, text=True, doc="manual.md", seed=0):
    """The document cut into ``size``-character chunks every ``stride`` characters, with
    ids that carry no information."""
    stride = stride or size
    starts = list(range(0, len(DOC), stride))
    names = random.Random(seed + size).sample(range(10_000), len(starts))
    entries = [{"id": f"x{n:04d}", "doc": doc, "start": s, "end": min(s + size, len(DOC)),
                **({"text": DOC[s:s + size]} if text else {})} for n, s in zip(names, starts)]
    return build_index(enumerate(entries), "v", "index.jsonl", where="chunks[{}]".format)


def _gold(*questions):
    return parse_gold_set({"schema_version": 1, "questions": [
        {"id": f"q{i}", "question": "?", "gold": gold, "evidence": evidence}
        for i, (gold, evidence) in enumerate(questions)]}, "gold.json")


def _independent_grades(index, evidence) -> dict:
    """The rule as docs/span-gold.md states it, counted character by character."""
    out: dict = {}
    for e in evidence:
        wanted = set(range(e["start"], e["end"]))
        for c in index.chunks.values():
            mine = set(range(c.start, c.end))
            shared = len(wanted & mine)
            if shared and (shared >= len(wanted) / 2 or shared >= len(mine) / 2):
                out[c.id] = max(out.get(c.id, e["grade"]), e["grade"])
    # every other chunk of a document the evidence names: judged, not relevant
    named = {e.get("doc", "manual.md") for e in evidence}
    for c in index.chunks.values():
        if c.doc in named:
            out.setdefault(c.id, 0)
    return out


@pytest.mark.parametrize("size,stride", [(100, None), (250, None), (400, 300), (37, None)])
def test_a_chunk_is_relevant_at_the_highest_grade_of_the_evidence_it_covers(size, stride):
    evidence = [{"doc": "manual.md", "start": 130, "end": 460, "grade": 2},
                {"doc": "manual.md", "start": 400, "end": 420, "grade": 3},
                {"doc": "manual.md", "start": 900, "end": 905, "grade": 1}]
    index = _cut(size, stride)
    resolved = resolve(_gold(([], evidence)), index, "gold.json").gold.questions[0]
    assert dict(resolved.gold) == _independent_grades(index, evidence)
    assert resolved.gold  # evidence in chunked text always has a chunk


def test_both_shares_count():
    assert SHARE == 0.5
    assert covers(0, 1000, 400, 450)  # a short quote inside a large chunk: half of the evidence
    assert covers(100, 200, 0, 1000)  # a small chunk inside a long passage: half of the chunk
    assert not covers(0, 100, 60, 200)  # 40 of 140 evidence characters, 40 of 100 chunk ones
    assert not covers(0, 100, 100, 200)  # touching is no overlap


def test_a_quote_resolves_to_its_first_occurrence_and_chunk_ids_are_kept_beside_it():
    index = _cut(100)
    quote = DOC[505:540]
    first = DOC.find(quote)
    q = resolve(_gold((["x-manual"], [{"doc": "manual.md", "quote": quote, "grade": 2}])), index,
                "gold.json").gold.questions[0]
    assert (q.evidence[0].start, q.evidence[0].end) == (first, first + len(quote))
    placed = _independent_grades(index, [{"start": first, "end": first + len(quote), "grade": 2}])
    assert dict(q.gold) == {"x-manual": 1, **placed}


def test_a_quote_not_found_and_a_document_gone_are_stale_gold():
    index = _cut(100)
    result = resolve(_gold(([], [{"doc": "manual.md", "quote": "no such words here"}]),
                           (["x-kept"], [{"doc": "gone.md", "start": 0, "end": 9, "grade": 2}])),
                     index, "gold.json")
    assert result.stale == {"q0": ["evidence:manual.md:'no such words here'"], "q1": ["evidence:gone.md@0-9"]}
    q0, q1 = result.gold.questions
    assert q0.stale_ids(index.ids) == ["evidence:manual.md:'no such words here'"] and q0.evidence == ()
    assert dict(q1.gold) == {"x-kept": 1, "evidence:gone.md@0-9": 2}


def test_a_manifest_that_cannot_place_the_evidence_is_named_with_what_is_missing():
    gold = _gold(([], [{"doc": "manual.md", "start": 0, "end": 10}]))
    with pytest.raises(InputErrors, match="give the index manifest"):
        resolve(gold, None, "gold.json")
    bare = build_index(enumerate(["a", "b"]), "v", "index.jsonl")
    with pytest.raises(InputErrors) as caught:
        resolve(gold, bare, "gold.json")
    assert caught.value.lines() == ["index.jsonl:chunks: span gold needs doc, start and end for each chunk, "
                                    "and no chunk of this manifest gives them"]
    quoted = _gold(([], [{"doc": "manual.md", "quote": "abc"}]))
    with pytest.raises(InputErrors) as caught:
        resolve(quoted, _cut(100, text=False), "gold.json")
    assert caught.value.lines() == ["index.jsonl:text: a quote names document 'manual.md' but no chunk of it "
                                    "gives its text"]


def _evidence_recall(index, question, retrieved_text: range, k: int) -> float:
    """evidence_recall@k of the chunks lying inside ``retrieved_text``, ranked in a shuffled order."""
    q = resolve(_gold(([], question)), index, "gold.json").gold.questions[0]
    ranking = [c.id for c in index.chunks.values() if c.start >= retrieved_text.start and c.end <= retrieved_text.stop]
    random.Random(3).shuffle(ranking)
    table = build_table([ranking], [dict(q.gold)])
    table.evidence = evidence_table([q], [ranking], index.chunks)
    values = compute_table([f"evidence_recall@{k}", f"recall@{k}"], table)
    return float(values[f"evidence_recall@{k}"][0]), float(values[f"recall@{k}"][0])


def test_evidence_recall_is_the_same_for_the_same_retrieved_text_at_every_chunk_size():
    evidence = [{"doc": "manual.md", "start": 150, "end": 750, "grade": 2},
                {"doc": "manual.md", "start": 1000, "end": 1050, "grade": 1}]
    retrieved = range(0, 600)  # every chunking below has boundaries at 0 and 600
    got = {size: _evidence_recall(_cut(size), evidence, retrieved, k=20) for size in (50, 150, 300)}
    # characters 150..599 of the grade-2 passage, none of the grade-1 one
    expected = (450 * 2) / (600 * 2 + 50 * 1)
    assert {size: e for size, (e, _) in got.items()} == pytest.approx({50: expected, 150: expected, 300: expected})
    assert len({round(r, 9) for _, r in got.values()}) > 1  # chunk-level recall moves with the chunk size


def test_the_worked_example_of_docs_span_gold_md():
    from ci_eval.core.gold.manifest import Chunk, ChunkIndex

    quote = "returns within 30 days"
    text = ("x" * 800 + quote).ljust(1200, "y")

    def cut(size: int, name: str) -> ChunkIndex:
        chunks = {f"{name}{n}": Chunk(f"{name}{n}", "manual.md", s, s + size, None, text[s:s + size])
                  for n, s in enumerate(range(0, 1200, size))}
        return ChunkIndex("v", chunks, "index.jsonl")

    question = [{"doc": "manual.md", "start": 300, "end": 500, "grade": 2}, {"doc": "manual.md", "quote": quote}]
    weight = 200 * 2 + len(quote) * 1
    expected = {"a": ({"a0": 2, "a1": 2, "a2": 1}, ["a1", "a0"], 100 / 400, 200 / 800),
                # b's other nine chunks lie in the document the evidence names: judged 0
                "b": ({**{f"b{n}": 0 for n in range(12)}, "b3": 2, "b4": 2, "b8": 1}, ["b4", "b3"],
                      100 / 100, 200 / 200)}
    for name, size in (("a", 400), ("b", 100)):
        index = cut(size, name)
        q = resolve(_gold(([], question)), index, "gold.json").gold.questions[0]
        grades, ranking, precision1, precision2 = expected[name]
        assert dict(q.gold) == grades
        table = build_table([ranking], [dict(q.gold)])
        table.evidence = evidence_table([q], [ranking], index.chunks)
        got = compute_table(["recall@1", "evidence_recall@1", "evidence_precision@1", "recall@2",
                             "evidence_recall@2", "evidence_precision@2"], table)
        assert got["recall@1"][0] == pytest.approx(1 / 3) and got["recall@2"][0] == pytest.approx(2 / 3)
        assert got["evidence_recall@1"][0] == pytest.approx(100 * 2 / weight)  # 0.474
        assert got["evidence_recall@2"][0] == pytest.approx(200 * 2 / weight)  # 0.948
        assert got["evidence_precision@1"][0] == pytest.approx(precision1)
        assert got["evidence_precision@2"][0] == pytest.approx(precision2)
    assert round(200 / weight, 3) == 0.474 and round(400 / weight, 3) == 0.948


def test_a_long_stale_quote_is_named_by_its_start_and_a_digest():
    import hashlib

    quote = "words that are not in the document " * 10
    result = resolve(_gold(([], [{"doc": "manual.md", "quote": quote}])), _cut(100), "gold.json")
    digest = hashlib.sha256(quote.encode()).hexdigest()[:12]
    assert result.stale == {"q0": [f"evidence:manual.md:{quote[:60]!r}...#{digest}"]}
