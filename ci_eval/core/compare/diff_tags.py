"""Per-tag change: each tag's mean over its compared questions, base and head, and the
paired test of each metric within the tag, every (tag, metric) pair one family (Holm)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from ci_eval.core.compare.stats import SEED, PairedTest, corrected, mean, paired_test


@dataclass(frozen=True)
class TagChange:
    tag: str
    n: int
    metrics: tuple[tuple[str, float, float], ...]  # (metric, base mean, head mean)
    tests: tuple[tuple[str, PairedTest], ...] = ()  # (metric, its test in the tag family)

    def test(self, metric: str) -> PairedTest | None:
        return dict(self.tests).get(metric)

    def delta(self, metric: str) -> float | None:
        for name, b, h in self.metrics:
            if name == metric:
                return h - b
        return None

    def worst(self, metrics) -> float:
        """The largest fall (most negative delta) over ``metrics``: "worst first" order."""
        deltas = [d for d in (self.delta(m) for m in metrics) if d is not None]
        return min(deltas, default=0.0)


def tag_changes(codes: np.ndarray, tag_lists: list[tuple[str, ...]],
                paired: dict, seed: int | None = None, ties: np.ndarray | None = None) -> tuple[TagChange, ...]:
    """``codes``: per compared question (in order), its index into ``tag_lists`` (the head's
    distinct tag lists): a tag's questions are found a tag list at a time, not a question
    at a time. ``ties``: the compared questions each test counts as unchanged
    (stats.paired_test)."""
    lists_of: dict[str, list[int]] = {}
    # the distinct codes, ascending (``np.unique`` would load ``numpy.ma``: start-up time)
    for code in np.flatnonzero(np.bincount(codes)).tolist():
        for tag in set(tag_lists[code]):
            lists_of.setdefault(tag, []).append(code)
    rows_of = {tag: np.flatnonzero(np.isin(codes, lists_of[tag])) for tag in sorted(lists_of)}
    # a tag's cell shows its mark alone: no interval to search for
    tests = corrected({(tag, name): paired_test(name, b[rows], h[rows], seed=_tag_seed(seed, tag),
                                                ties=None if ties is None else ties[rows],
                                                with_interval=False)
                       for tag, rows in rows_of.items() for name, (b, h) in paired.items()})
    return tuple(TagChange(tag, len(rows), tuple(
        (name, mean(b[rows].tolist()), mean(h[rows].tolist())) for name, (b, h) in paired.items()),
        tuple((name, tests[tag, name]) for name in paired)) for tag, rows in rows_of.items())


def _tag_seed(seed: int | None, tag: str) -> int:
    # one stream per tag (and, inside paired_test, per metric): a new tag moves no other
    return (SEED if seed is None else seed) + zlib.crc32(tag.encode("utf-8"))
