"""Characters of documents covered: what the evidence metrics count.

A span is ``(doc, start, end)``, ``end`` just past the last character. Evidence is graded
spans; where two pieces of evidence overlap, a character has the higher grade (it is one
character, judged once). Retrieved chunks are spans too; where two overlap, a character is
counted once, so a ranking of overlapping chunks is not paid twice for the same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

Span = tuple[str, int, int]


def graded_segments(evidence: Iterable[tuple[str, int, int, float]]) -> dict[str, list[tuple[int, int, float]]]:
    """Per document, sorted disjoint ``(start, end, grade)`` pieces, each at the highest
    grade of the evidence covering it (empty spans dropped)."""
    by_doc: dict[str, list[tuple[int, int, float]]] = {}
    for doc, start, end, grade in evidence:
        if end > start:
            by_doc.setdefault(doc, []).append((start, end, grade))
    out = {}
    for doc, spans in by_doc.items():
        points = sorted({p for start, end, _ in spans for p in (start, end)})
        pieces: list[tuple[int, int, float]] = []
        for a, b in zip(points, points[1:]):
            grades = [grade for start, end, grade in spans if start <= a and b <= end]
            if not grades:
                continue
            if pieces and pieces[-1][1] == a and pieces[-1][2] == max(grades):
                pieces[-1] = (pieces[-1][0], b, pieces[-1][2])
            else:
                pieces.append((a, b, max(grades)))
        out[doc] = pieces
    return out


def union(spans: Iterable[Span]) -> dict[str, list[tuple[int, int]]]:
    """Per document, the sorted disjoint intervals the spans cover together."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc, start, end in spans:
        if end > start:
            by_doc.setdefault(doc, []).append((start, end))
    out = {}
    for doc, intervals in by_doc.items():
        intervals.sort()
        merged = [intervals[0]]
        for start, end in intervals[1:]:
            if start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        out[doc] = merged
    return out


def _weight_within(pieces: list[tuple[int, int, float]], intervals: list[tuple[int, int]]) -> float:
    """Sum over the characters both cover of their grade (both lists sorted and disjoint)."""
    total, i, j = 0.0, 0, 0
    while i < len(pieces) and j < len(intervals):
        start, end, grade = pieces[i]
        lo, hi = max(start, intervals[j][0]), min(end, intervals[j][1])
        if hi > lo:
            total += grade * (hi - lo)
        if end <= intervals[j][1]:
            i += 1
        else:
            j += 1
    return total


class EvidenceTable:
    """Per query, its evidence and the spans of its ranked chunks, best first.

    ``evidence[q]`` is query q's ``(doc, start, end, grade)`` evidence; ``ranked[q]`` the
    span of each ranked chunk, or None for a chunk whose span is unknown (it covers no
    character, and adds none to the characters retrieved).
    """

    def __init__(self, evidence: Sequence[Sequence[tuple[str, int, int, float]]],
                 ranked: Sequence[Sequence[Span | None]]):
        if len(evidence) != len(ranked):
            raise ValueError("evidence and ranked spans must have one entry per query")
        self.evidence = evidence
        self.ranked = ranked

    def _pieces(self, q: int, level: float) -> dict[str, list[tuple[int, int, float]]]:
        # Evidence below the relevance level, or graded 0 or less, is not evidence.
        return graded_segments(e for e in self.evidence[q] if e[3] >= level and e[3] > 0)

    def _covered(self, q: int, k: int) -> dict[str, list[tuple[int, int]]]:
        return union(span for span in self.ranked[q][:k] if span is not None)

    def recall_at(self, k: int, level: float) -> np.ndarray:
        out = np.zeros(len(self.ranked))
        for q in range(len(self.ranked)):
            pieces = self._pieces(q, level)
            whole = sum(grade * (end - start) for doc in pieces.values() for start, end, grade in doc)
            if whole:
                covered = self._covered(q, k)
                out[q] = sum(_weight_within(p, covered.get(doc, [])) for doc, p in pieces.items()) / whole
        return out

    def precision_at(self, k: int, level: float) -> np.ndarray:
        out = np.zeros(len(self.ranked))
        for q in range(len(self.ranked)):
            covered = self._covered(q, k)
            retrieved = sum(end - start for doc in covered.values() for start, end in doc)
            if retrieved:
                flat = {doc: [(s, e, 1.0) for s, e, _ in p] for doc, p in self._pieces(q, level).items()}
                out[q] = sum(_weight_within(p, covered.get(doc, [])) for doc, p in flat.items()) / retrieved
        return out
