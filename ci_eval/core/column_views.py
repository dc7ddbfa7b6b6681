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


def offsets(starts) -> np.ndarray:
    """A column's offsets (``top_start``, ``gold_start``: an ``array`` of n + 1) as int64."""
    return np.asarray(starts).astype(np.int64)


def run_positions(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The flat positions of the runs ``[start[r], end[r])``, in order, and for each
    position the run r it belongs to."""
    lengths = np.maximum(end - start, 0)
    owner = np.repeat(np.arange(len(start), dtype=np.int64), lengths)
    first = np.cumsum(lengths) - lengths  # where each run begins in the flat result
    positions = np.arange(int(lengths.sum()), dtype=np.int64) - first[owner] + start[owner]
    return positions, owner


class IdCodes:
    """Id string -> an integer code, shared by everything one comparison encodes (codes
    are unique per string, not dense)."""

    def __init__(self):
        self._codes: dict[str, int] = {}
        self._next = count()
        # id(list) -> (the list, its codes): holding the list keeps its id from being reused
        self._done: dict[int, tuple[list[str], np.ndarray]] = {}

    def of(self, strings: list[str]) -> np.ndarray:
        """The code of each string of ``strings`` (a column's id list, encoded once)."""
        kept = self._done.get(id(strings))
        if kept is None or len(kept[1]) != len(strings):
            codes = np.fromiter(map(self._codes.setdefault, strings, self._next),
                                dtype=np.int64, count=len(strings))
            kept = self._done[id(strings)] = (strings, codes)
        return kept[1]


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
    starts = offsets(columns.top_start)
    present = rows >= 0
    safe = np.where(present, rows, 0)
    start = np.where(present, starts[safe], 0)
    end = np.where(present, np.minimum(start + k, starts[safe + 1]), 0)
    return run_positions(start, end)


def gold_runs(columns, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gold ids' runs of the questions at ``rows``: flat positions into
    ``columns.gold_ids`` and the index into ``rows`` each belongs to."""
    starts = offsets(columns.gold_start)
    return run_positions(starts[rows], starts[rows + 1])


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
        self.first_gold_rank, self.gold_ranks = columns.first_gold_rank(i), columns._ranks(i)
        if head:
            self.id, self.question = columns.ids[i], columns.text(i)
            self.tags, self.status = columns.tag_lists[columns.tags[i]], columns.status_of(i)
            self.gold, self.error = columns.gold(i), columns.errors.get(i)
