"""Per-tag change: each tag's mean over its compared questions, base and head."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ci_eval.core.stats import mean


@dataclass(frozen=True)
class TagChange:
    tag: str
    n: int
    metrics: tuple[tuple[str, float, float], ...]  # (metric, base mean, head mean)

    def delta(self, metric: str) -> float | None:
        for name, b, h in self.metrics:
            if name == metric:
                return h - b
        return None

    def worst(self, metrics) -> float:
        """The largest fall (most negative delta) over ``metrics``: "worst first" order."""
        deltas = [d for d in (self.delta(m) for m in metrics) if d is not None]
        return min(deltas, default=0.0)


def tag_changes(compared: tuple[str, ...], tags_of: dict[str, tuple[str, ...]],
                paired: dict) -> tuple[TagChange, ...]:
    by_tag: dict[str, list[int]] = {}
    for pos, qid in enumerate(compared):
        for tag in set(tags_of[qid]):
            by_tag.setdefault(tag, []).append(pos)
    out = []
    for tag in sorted(by_tag):
        rows = np.array(by_tag[tag], dtype=np.intp)
        out.append(TagChange(tag, len(rows), tuple(
            (name, mean(b[rows].tolist()), mean(h[rows].tolist()))
            for name, (b, h) in paired.items())))
    return tuple(out)
