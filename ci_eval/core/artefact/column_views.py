"""Views over an artefact's question columns as numpy arrays, for work done once over every
question rather than once per question: runs of ids (each question's kept top ids, its gold
ids) as flat positions with the question each belongs to, ids as integer codes, and
"is this id in that question's set" for a whole run at once.

Ids become integers through one dict per comparison (``IdCodes``): equal strings get equal
codes whichever artefact they come from, so a membership test is a comparison of integer
pairs (question, code) that numpy sorts once.
"""

from __future__ import annotations

from itertools import count

import numpy as np


def bounds(starts, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the runs of the questions at ``rows`` begin and end in a flat column, from its
    offsets (``top_start``, ``gold_start``: an ``array`` of n + 1), as int64."""
    view = np.asarray(starts)  # no copy: only the rows asked for are gathered and cast
    return view[rows].astype(np.int64), view[rows + 1].astype(np.int64)


def run_positions(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The flat positions of the runs ``[start[r], end[r])``, in order, and for each
    position the run r it belongs to."""
    lengths = np.maximum(end - start, 0)
    owner = np.repeat(np.arange(len(start), dtype=np.int64), lengths)
    first = np.cumsum(lengths) - lengths  # where each run begins in the flat result
    positions = np.arange(int(lengths.sum()), dtype=np.int64) - first[owner] + start[owner]
    return positions, owner


class IdCodes:
    """Id string -> an integer code, shared by everything one block of a comparison encodes
    (codes are unique per string, not dense; a new one per block bounds the map's size)."""

    def __init__(self):
        self._codes: dict[str, int] = {}
        self._next = count()

    def of(self, strings: list[str], positions: np.ndarray) -> np.ndarray:
        """The codes of ``strings[p]`` for each p in ``positions``."""
        picked = map(strings.__getitem__, positions.tolist())
        return np.fromiter(map(self._codes.setdefault, picked, self._next), dtype=np.int64,
                           count=len(positions))


class ColumnCodes:
    """Id string -> an integer code for a whole comparison: every distinct string of the
    columns numbered once, each column coded in one pass, a run's codes gathered by numpy
    (rather than a map per block, each id looked up again for every block and stage)."""

    def __init__(self, columns: list[list[str]]):
        index, numbers = {}, count()
        self._codes = {id(strings): np.fromiter(map(index.setdefault, strings, numbers),
                                                dtype=np.int64, count=len(strings))
                       for strings in columns}

    def of(self, strings: list[str], positions: np.ndarray) -> np.ndarray:
        """The codes of ``strings[p]`` for each p in ``positions`` (``strings``: one of the
        columns given)."""
        return self._codes[id(strings)][positions]


# Above this many ids in all, the map of every distinct id could cost more memory than a
# block's own map (at a million questions, hundreds of megabytes): codes a block at a time.
CODED_AT_MOST = 1 << 22


def comparison_codes(*columns: list[str]):
    """What gives each block of a comparison its id codes, for ids from ``columns``: one
    ``ColumnCodes`` for every block, or past ``CODED_AT_MOST`` ids a new ``IdCodes`` per
    block."""
    if sum(map(len, columns)) <= CODED_AT_MOST:
        shared = ColumnCodes(list(columns))
        return lambda: shared
    return IdCodes


def member(owner: np.ndarray, codes: np.ndarray, set_owner: np.ndarray,
           set_codes: np.ndarray) -> np.ndarray:
    """For each (owner, code): whether the set of run ``owner`` (the pairs
    ``set_owner, set_codes``) holds that code. One sort of the sets' pairs, one search."""
    if not len(owner) or not len(set_owner):
        return np.zeros(len(owner), dtype=bool)
    width = int(max(codes.max(), set_codes.max())) + 1
    keys = np.sort(set_owner * width + set_codes)
    wanted = owner * width + codes
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return keys[at] == wanted


def top_runs(columns, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The kept top ids' runs (at most k each) of the questions at ``rows``, -1 for none:
    flat positions into ``columns.top_ids`` and the index into ``rows`` each belongs to."""
    present = rows >= 0
    start, end = bounds(columns.top_start, np.where(present, rows, 0))
    start = np.where(present, start, 0)
    return run_positions(start, np.where(present, np.minimum(start + k, end), 0))


def gold_runs(columns, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gold ids' runs of the questions at ``rows``: flat positions into
    ``columns.gold_ids`` and the index into ``rows`` each belongs to."""
    return run_positions(*bounds(columns.gold_start, rows))


# Questions worked on at once: what the arrays and the id map of one block take stays a few
# megabytes however many questions a comparison has.
BLOCK = 1 << 15


def blocks(n: int):
    """(start, stop) of each block of ``n`` positions."""
    return ((a, min(a + BLOCK, n)) for a in range(0, n, BLOCK))


def measured_rows(columns) -> np.ndarray:
    """The positions of the measured questions, in reading order."""
    return np.flatnonzero(columns.measured_mask()) if len(columns) else np.zeros(0, np.int64)


class ChangeSide:
    """What ``diff_questions.change_of`` reads of one side's question, read straight from
    the columns: no metric mapping, no ranking, none of a record's other fields. Of the
    base side (``head=False``) it reads only the first gold rank and the gold ranks."""

    __slots__ = ("id", "question", "tags", "status", "first_gold_rank", "gold", "gold_ranks",
                 "error")

    def __init__(self, columns, i: int, head: bool = True):
        self.first_gold_rank, self.gold_ranks = columns.first_gold_rank(i), columns.gold_rank_records(i)
        if head:
            self.id, self.question = columns.ids[i], columns.text(i)
            self.tags, self.status = columns.tag_lists[columns.tags[i]], columns.status_of(i)
            self.gold, self.error = columns.gold(i), columns.errors.get(i)
