"""trec_eval's order of (id, score) rows, vectorised with numpy, for TREC files and columns.

The order itself, and ``order`` for one ranking, are in core/measure/trec_order.py: score
descending, then id descending compared byte by byte (``strcmp``). The functions here give
the same order to many groups of rows at once.
"""

from __future__ import annotations

import numpy as np


def order_rows(group: np.ndarray | None, scores: np.ndarray, ids: np.ndarray,
               heads: np.ndarray | None = None, head_group: np.ndarray | None = None
               ) -> np.ndarray | None:
    """Permutation putting rows in trec_eval order within each group, or None if they are.

    The vectorised counterpart of ``order`` for the TREC file path. ``group`` holds an
    integer code per row (the query), ``scores`` the float64 scores and ``ids`` the ids
    as a fixed-width bytes array (numpy ``S``; ids hold no NUL byte), whose comparisons
    go byte by byte like ``strcmp``, or as the TREC parser keeps them: rows of uint64 words
    holding the id's bytes, zero padded. ``heads``, when given, are the rows where ``group``
    changes value (0 first, ascending) and ``head_group`` the group from each head on;
    given both, ``group`` may be None. Afterwards the rows of a group are contiguous
    (groups already contiguous keep their place) and ordered by score descending, then
    id descending. ``order_moves`` gives the same order in two parts.
    """
    perm, moves = order_moves(group, scores, ids, heads, head_group)
    if moves is None:
        return perm
    rows, inner = moves
    fixed = np.arange(len(scores))
    fixed[rows] = rows[inner]
    return fixed if perm is None else perm[fixed]


def order_moves(group: np.ndarray | None, scores: np.ndarray, ids: np.ndarray,
                heads: np.ndarray | None = None, head_group: np.ndarray | None = None):
    """``order_rows``' order as ``(perm, moves)``: ``perm`` puts each group's rows
    together in score order (None when they are), and ``moves``, None when no tie is out
    of order, is ``(rows, inner)``: after ``perm``, position ``rows[i]`` takes the row at
    position ``rows[inner[i]]`` (``rows`` ascending: the rows of tie runs that move).

    Run files usually come grouped and in rank order, with ties in any order, so the
    work is done in steps that cost nothing when they have nothing to do: sort by
    (group, score) only if that order is broken, then re-sort only the rows inside runs
    of tied scores. Over all rows it takes two comparisons of neighbouring scores; the
    rest works on the few rows where the scores rise or tie.
    """
    n = len(scores)
    if n < 2:
        return None, None
    if heads is None:
        heads = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    if head_group is None:
        head_group = group[heads]
    boundary = np.zeros(n, dtype=bool)  # row i + 1 starts a new run of its group
    boundary[heads[1:] - 1] = True
    boundary = boundary[:-1]
    by_group = np.sort(head_group)
    contiguous = not np.any(by_group[1:] == by_group[:-1])
    rises = np.flatnonzero(scores[1:] > scores[:-1])
    perm = None
    if not (contiguous and np.all(boundary[rises])):
        runs = np.diff(np.append(heads, n))
        key = np.repeat(np.arange(len(heads)) if contiguous else head_group, runs)
        perm = np.lexsort((-scores, key))
        group, scores, ids = key[perm], scores[perm], np.take(ids, perm, axis=0)
        heads = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
        boundary = np.zeros(n, dtype=bool)
        boundary[heads[1:] - 1] = True
        boundary = boundary[:-1]
    return perm, _tie_moves(scores, ids, heads, boundary)


_CHUNK = 1 << 20  # rows per step of the tie work (whole groups): temporaries stay small


def _tie_moves(scores: np.ndarray, ids: np.ndarray, heads: np.ndarray, boundary: np.ndarray):
    """``order_moves``' ``moves`` for rows grouped and in score order: a step of whole
    groups at a time (a tie never crosses a group), so each step's temporaries are a few
    megabytes, reused from one step to the next."""
    n = len(scores)
    cuts = distinct_sorted(heads[np.searchsorted(heads, np.arange(0, n, _CHUNK), side="right") - 1])
    bounds = np.append(cuts, n).tolist()
    rows, inner, total = [], [], 0
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        got = _step_moves(scores[lo:hi], ids[lo:hi], boundary[lo:hi - 1])
        if got is not None:
            rows.append(got[0] + lo)
            inner.append(got[1] + total)
            total += len(got[0])
    return (np.concatenate(rows), np.concatenate(inner)) if rows else None


def _step_moves(scores: np.ndarray, ids: np.ndarray, boundary: np.ndarray):
    """The rows of one step that move, ascending, and where each takes its row from
    (``inner``, into those rows); None when every tie is already in id order.

    Neighbours (i, i + 1) with equal scores are compared once; a run of two tied rows
    (most runs) is then in order or swapped, and only the longer runs with a pair out of
    order are sorted."""
    m = len(scores)
    tie = np.flatnonzero((scores[1:] == scores[:-1]) & ~boundary)
    if len(tie) == 0:
        return None
    rising = _less(_row_words(ids, tie), _row_words(ids, tie + 1))  # id order broken
    if not rising.any():
        return None
    # Consecutive pairs chain into runs of tied rows: run r starts at row tie[opens[r]]
    # and holds pairs[r] + 1 rows.
    opens = np.flatnonzero(np.concatenate(([True], tie[1:] != tie[:-1] + 1)))
    pairs = np.diff(np.append(opens, len(tie)))
    broken = np.logical_or.reduceat(rising, opens)
    source = np.arange(m)  # position i takes the row at source[i]
    swap = tie[opens[broken & (pairs == 1)]]
    source[swap], source[swap + 1] = swap + 1, swap
    longer = broken & (pairs > 1)
    if longer.any():
        first, lengths = tie[opens[longer]], pairs[longer] + 1
        starts = np.cumsum(lengths) - lengths
        run_id = np.repeat(np.arange(len(first)), lengths)
        at = np.arange(len(run_id)) + np.repeat(first - starts, lengths)
        source[at] = at[_id_descending_within(_row_words(ids, at), run_id, starts, lengths - 1)]
    moved = np.flatnonzero(source != np.arange(m))
    index = np.empty(m, dtype=np.int64)
    index[moved] = np.arange(len(moved))
    return moved, index[source[moved]]


def _row_words(ids: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The ids of ``rows`` as (rows x n) uint64 words that compare as their bytes."""
    if ids.ndim == 2:  # already words of the id bytes in machine order (the TREC parser's)
        # np.take gathers whole rows several times faster than fancy indexing does.
        return np.take(ids, rows, axis=0).view(">u8").astype(np.uint64)
    return _big_endian_words(ids[rows])


def _less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise ``a < b`` for rows of words compared in turn (byte order)."""
    less = np.zeros(len(a), dtype=bool)
    same = np.ones(len(a), dtype=bool)
    for k in range(a.shape[1]):
        less |= same & (a[:, k] < b[:, k])
        same &= a[:, k] == b[:, k]
    return less


_NETWORK_MAX = 8  # longest tie run sorted by compare-and-swap; longer runs use lexsort


def _id_descending_within(key: np.ndarray, run_id: np.ndarray, starts: np.ndarray,
                          pairs: np.ndarray) -> np.ndarray:
    """The order that puts each run of tied rows in id-descending order: position ``i``
    takes the row at ``inner[i]``. Tie runs in real run files are short (mostly two rows),
    so runs of one length at a time go through an odd-even transposition network of
    compare-and-swaps over all such runs at once; only runs longer than ``_NETWORK_MAX``
    pay for a sort."""
    inner = np.arange(len(key))
    lengths = pairs + 1
    for length in distinct_sorted(np.sort(lengths)).tolist():
        first = starts[lengths == length]
        if length > _NETWORK_MAX:
            continue
        slots = first[:, None] + np.arange(length)
        for step in range(length):
            for j in range(step % 2, length - 1, 2):
                left, right = slots[:, j], slots[:, j + 1]
                swap = _less(key[left], key[right])
                slots[swap, j], slots[swap, j + 1] = right[swap], left[swap]
        inner[first[:, None] + np.arange(length)] = slots
    longer = np.flatnonzero(np.repeat(lengths > _NETWORK_MAX, lengths))
    if len(longer):
        # ~w reverses an unsigned order; np.lexsort is stable, its last key first.
        keys = [~key[longer, k] for k in reversed(range(key.shape[1]))] + [run_id[longer]]
        inner[longer] = longer[np.lexsort(keys)]
    return inner


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """The distinct values of an ascending array. (``np.unique`` would do, but it loads
    ``numpy.ma`` on first use, a sixth of ``evaluate``'s start-up.)"""
    if len(values) == 0:
        return values
    return values[np.concatenate(([True], values[1:] != values[:-1]))]


def _big_endian_words(ids: np.ndarray) -> np.ndarray:
    """Fixed-width byte strings as (rows x n) uint64, most significant byte first, so
    that comparing the words in turn compares the bytes (zero padding sorts first)."""
    width = ids.dtype.itemsize
    chars = np.zeros((len(ids), 8 * max(1, -(-width // 8))), dtype=np.uint8)
    chars[:, :width] = np.ascontiguousarray(ids).view(np.uint8).reshape(len(ids), width)
    return chars.view(">u8").astype(np.uint64)
