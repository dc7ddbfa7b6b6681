"""One run artefact read for `ci-eval history`: its head checked as `ci-eval compare` checks it,
of each question row only the fields the history uses (core/artefact/question_row.HISTORY_FIELDS).

The file is cut by the writer's layout (inputs/artefact_file.read_layout: the keys before and
after the rows parsed with every check, held to the schema's shell and the metric names'
checks), and each piece of row lines (about 128 KB) is decoded by msgspec into a row type
that declares the question row's positions up to the last the history uses (its first gold
rank, the ninth): the six it uses typed with the types and bounds compare's reader gives them
(inputs/typed_rows.ROW_TYPES, the schema's: an id's and a tag's length, how many tags and
gold pairs, a grade's range, metric values in [0, 1] or null, a first gold rank of at least
1 or null), the three others between them kept as ``msgspec.Raw``, the positions after the
ninth passed over unbuilt. Then what no type
says of those six: one metric value per metric name (or none), no chunk named twice in a
row's gold, question ids unique, the tags held to their limit; the means and the stage chain
in the head as compare holds them (artefact_checks.shape_problems). Every byte is valid UTF-8
and every row valid JSON.

What the history no longer checks, because it reads none of it: the ten fields it passes over
(the question's text, status, stale chunks, top score, latency, answer, judged@k, error,
warnings and ranking) beyond being JSON: their types, bounds, a ranking naming a chunk twice,
a number too large for a float; a row's length past its ninth position (the sixteen
positions of ``question_fields``); and the counts the artefact states (its summary's, its
gold set's number of questions, its stage and call records) against its rows. A run broken
only there is read: the history is a report over the user's own runs that reads only what it
shows, and ``ci-eval compare``, which reads the ranking and the rest, still refuses it. A
field the history does use is held to every bound compare holds it to.

Anything else it cannot take (a file not in the writer's layout, a surrogate escape, a value
of a field it uses out of its bounds, a check refused) is None: the caller then reads the
file with the full reader, which words the refusal (the fast path never refuses, it only
steps aside). Measured with ``python benchmarks/bench_history.py`` (docs/benchmarks.md).
"""

from __future__ import annotations

import os
from itertools import chain
from operator import attrgetter

import msgspec
import numpy as np

from ci_eval.core.artefact.question_row import FIELD, HISTORY_FIELDS, QUESTION_FIELDS
from ci_eval.core.compare.history import RANK_CAP, RunRows, gold_keys
from ci_eval.inputs.artefact_file import read_layout
from ci_eval.inputs.files import read_blocks
from ci_eval.inputs.loaders import MAX_ARTEFACT_BYTES
from ci_eval.inputs.typed_rows import ROW_TYPES

# The row's positions up to the last the history uses, as an array-like struct: msgspec reads
# a row's array into it position by position and passes over the positions after it without
# building anything (a tuple of all sixteen, the ten unused as msgspec.Raw, decoded 1.2x as
# slowly). No cycle can form in it, so the cycle collector need not track it.
_LAST = max(FIELD[name] for name in HISTORY_FIELDS)
_ROW = msgspec.defstruct("HistoryRow", [(name, ROW_TYPES[name] if name in HISTORY_FIELDS else msgspec.Raw)
                                        for name in QUESTION_FIELDS[:_LAST + 1]], array_like=True, gc=False)
_ROWS = msgspec.json.Decoder(list[_ROW])
_USED = attrgetter(*HISTORY_FIELDS)
# Rows made into columns about this many bytes at a time: a piece's objects (about three times
# its text) still fit the processor's cache, and the numpy calls made a piece are fewer than at
# the compare reader's 32 KB.
_PIECE = 128 * 1024


def read_run_rows(path: str | os.PathLike, max_bytes: int = MAX_ARTEFACT_BYTES) -> tuple[dict, RunRows] | None:
    """The header (every key but the questions) and the history's columns of the version 2
    artefact at ``path`` in the writer's layout; None when it is not in that layout or a
    check refuses it (the caller's full read then words why)."""
    from ci_eval.core.artefact.artefact_checks import shape_problems

    rows = _Rows()
    read = read_layout(read_blocks(path, "run artefact", max_bytes), str(path), rows.read, _PIECE)
    if read is None:
        return None
    data, problems, columns = read
    shape_problems(data, len(columns.ids), len(set(chain.from_iterable(rows.tag_lists))), problems)
    return None if problems.found else (data, columns)


class _Rows:
    """A run's rows made into the history's columns a piece at a time, while the piece's
    objects are still in the processor's cache: only each row's id and tags outlive it."""

    def __init__(self):
        self.ids: list[str] = []
        self.seen: set[str] = set()  # the ids, to find one given twice
        self.tag_lists: dict[tuple, tuple] = {}  # each distinct list of tags, one tuple for all its rows
        self.tags: list[tuple] = []
        self.arrays: list[tuple] = []  # each piece's (gold keys, unanswerable, first ranks, values)

    def read(self, pieces, early: dict) -> RunRows | None:
        """The pieces' rows as the history's columns; None at the first piece it cannot take."""
        metrics = tuple(early["metrics"])
        for body in pieces:
            if not self._add(body, len(metrics)):
                return None
        if not self.arrays:
            return None  # no row: the schema asks for one
        gold, unanswerable, first, values = (np.concatenate(column) for column in zip(*self.arrays))
        return RunRows(metrics, self.ids, self.tags, gold, unanswerable, first, values)

    def _add(self, body: bytes, metrics: int) -> bool:
        """A piece's rows added; False when a row is one history's path cannot take."""
        if not body.isascii():
            try:
                body.decode("utf-8")  # the positions passed over are not decoded, so not checked by msgspec
            except UnicodeDecodeError:
                return False
        try:
            rows = _ROWS.decode(b"[" + body + b"]")
        except msgspec.DecodeError:  # ValidationError is one too
            return False
        if not rows:
            return False
        ids, tags, gold, unanswerable, ranks, recorded = zip(*map(_USED, rows))
        counts = list(map(len, recorded))
        lens = list(map(len, gold))
        if not set(counts) <= {0, metrics}:
            return False  # a metric value count off
        if max(lens) > 1 and any(len(dict(pairs)) != len(pairs) for pairs in gold if len(pairs) > 1):
            return False  # a chunk named twice in one row's gold
        try:
            first = np.array(ranks, dtype=np.float64)  # None is NaN; an int past a float's range raises
        except OverflowError:
            return False
        size = len(self.seen)
        self.seen.update(ids)
        if len(self.seen) != size + len(ids):
            return False  # a question id given twice
        self.ids.extend(ids)
        tuples = list(map(tuple, tags))
        self.tags.extend(map(self.tag_lists.setdefault, tuples, tuples))
        pairs = list(chain.from_iterable(gold))
        starts = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        values = np.full((len(rows), metrics), np.nan, dtype=np.float32)
        if metrics:  # None is NaN; float32 as the history keeps them
            flat = np.fromiter(chain.from_iterable(recorded), dtype=np.float64, count=sum(counts))
            values[np.array(counts, dtype=bool)] = flat.reshape(-1, metrics)
        self.arrays.append((gold_keys([p[0] for p in pairs], [p[1] for p in pairs], starts),
                            np.array(unanswerable, dtype=bool),
                            np.where(np.isnan(first), 0, np.minimum(first, RANK_CAP)).astype(np.int16), values))
        return True
