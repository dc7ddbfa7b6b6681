"""(id, score) pairs -> a Ranking in trec_eval's order, one ranking at a time.

trec_eval ignores the rank a run claims and sorts each query's results by score
descending, breaking ties by document id descending, compared byte by byte (``strcmp``).
Every ranking in ci_eval goes through ``order`` (or its vectorised counterparts for TREC
files, core/measure/ranking.py) so the metrics only ever see orderings and two tools given
the same scores agree on who ranks first in a tie.

Pure Python, apart from ranking.py's numpy: a python retriever's worker process orders each
answer it cannot take as a batch with ``order``, and importing numpy there was 120 ms of a
small run's CPU in a process that computes no metric.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ci_eval.errors import InputError


@dataclass(frozen=True)
class Ranking:
    ids: tuple[str, ...]  # best first: score descending, then id descending (UTF-8 bytes)
    scores: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.scores):
            raise ValueError("a Ranking needs one score per id")

    def __len__(self) -> int:
        return len(self.ids)


def _tie_key(pair: tuple[str, float]) -> tuple[float, bytes]:
    # Python compares str by code point, which agrees with UTF-8 byte order except for
    # surrogates; comparing the encoded bytes is exactly trec_eval's strcmp.
    return (pair[1], pair[0].encode("utf-8", "surrogatepass"))


def order(pairs: Iterable[tuple[str, float]]) -> Ranking:
    """Sort (id, score) pairs by score descending, then id descending in UTF-8 byte order.

    This is trec_eval's tie order. The result does not depend on the input order, except
    for repeated (id, score) pairs, which stay in input order. Duplicate ids are kept:
    callers that must reject or drop them do so before ordering.
    Raises ``InputError`` for a score that is not a finite number (NaN has no place in
    an order).
    """
    items = []
    for position, (cid, score) in enumerate(pairs, 1):
        value = float(score)
        if not math.isfinite(value):
            raise InputError(f"result {position} ({cid!r}) has a non-finite score ({value})")
        items.append((str(cid), value))
    items.sort(key=_tie_key, reverse=True)
    return Ranking(tuple(c for c, _ in items), tuple(s for _, s in items))
