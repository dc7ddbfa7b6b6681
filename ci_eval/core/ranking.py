"""(id, score) pairs -> a Ranking in trec_eval's order.

trec_eval ignores the rank a run claims and sorts each query's results by score
descending, breaking ties by document id descending, compared byte by byte (``strcmp``).
Every ranking in ci_eval goes through ``order`` so the metrics only ever see orderings
and two tools given the same scores agree on who ranks first in a tie.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

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


def order_rows(group: np.ndarray, scores: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
    """Permutation putting rows in trec_eval order within each group, or None if they are.

    The vectorised counterpart of ``order`` for the TREC file path. ``group`` holds an
    integer code per row (the query), ``scores`` the float64 scores and ``ids`` the ids
    as a fixed-width bytes array (numpy ``S``; ids hold no NUL byte), whose comparisons
    go byte by byte like ``strcmp``. Afterwards the rows of a group are contiguous
    (groups already contiguous keep their place) and ordered by score descending, then
    id descending.

    Run files usually come grouped and in rank order, with ties in any order, so the
    work is done in steps that cost nothing when they have nothing to do: sort by
    (group, score) only if that order is broken, then re-sort only the rows inside runs
    of tied scores.
    """
    n = len(scores)
    if n < 2:
        return None
    perm = None
    same = group[1:] == group[:-1]
    heads = group[np.concatenate(([0], np.flatnonzero(~same) + 1))]
    contiguous = len(np.unique(heads)) == len(heads)
    if not (contiguous and np.all((scores[1:] <= scores[:-1]) | ~same)):
        key = np.cumsum(np.concatenate(([0], ~same))) if contiguous else group
        perm = np.lexsort((-scores, key))
        group, scores, ids = group[perm], scores[perm], ids[perm]
        same = group[1:] == group[:-1]
    tie = same & (scores[1:] == scores[:-1])
    if not np.any(tie):
        return perm
    # Rows that share their score with a neighbour, and which tie run each belongs to.
    member = np.zeros(n, dtype=bool)
    member[1:] |= tie
    member[:-1] |= tie
    rows = np.flatnonzero(member)
    run_id = np.cumsum(np.concatenate(([True], ~tie)))[rows]
    sub = ids[rows]
    boundary = run_id[1:] != run_id[:-1]
    if np.all((sub[1:] < sub[:-1]) | boundary):
        return perm
    # Rank the tied ids (ascending byte order), then sort each run by rank descending;
    # np.lexsort is stable and sorts by its last key first.
    _, rank = np.unique(sub, return_inverse=True)
    inner = np.lexsort((-rank.ravel(), run_id))
    fixed = np.arange(n)
    fixed[rows] = rows[inner]
    return fixed if perm is None else perm[fixed]
