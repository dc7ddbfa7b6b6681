"""The version 2 artefact as text, a piece at a time, so a run never holds its rows.

The layout is the writer's promise (docs/artefact.md): ``{``, the keys
known before the first question one per line in sorted order, ``"questions"`` with one
compact row per line in gold-set order, then the keys known only at the end (``cache``,
``history``, ``summary``) one per line, sorted. A reader may take that layout as a fast path;
any JSON of the same content is the same artefact.

Pure: the pieces are yielded, never written here (inputs/files.py writes them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator

from ci_eval.core.artefact.question_row import QUESTION_FIELDS

# One encoder for every piece: the C encoder, without json.dumps' per-call set-up.
_ENCODE = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
# The same text for rows, without the check for a value that contains itself: a row is
# made of the gold set's and the retriever's strings and numbers, or read from JSON, and
# cannot hold itself; the check costs a fifth of encoding a row.
_ENCODE_ROWS = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                                check_circular=False).encode

# The top-level keys a run only knows once its last question is measured. ``history``
# is among them because the action learns the base's history from a lookup that runs
# while the retriever does.
END_KEYS = frozenset({"cache", "calls", "history", "repeat", "stages", "summary"})


def compact(value) -> str:
    return _ENCODE(value)


ROWS_PER_PIECE = 256
# Between two rows of one encoded batch: a string no row can hold where a row ends, since a
# row ends in "]" and every occurrence is counted before it is replaced.
_SENTINEL = "\x00ci-eval row\x00"
_SEPARATOR = f",{_ENCODE(_SENTINEL)},"


def _batches(rows: Iterable, size: int) -> Iterator[list]:
    batch = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _encode_rows(batch: list) -> str:
    """Rows one a line, joined by ",\n  ": one call of the C encoder for the batch (a
    call per row costs as much again in set-up), the rows told apart by a sentinel."""
    spaced = [_SENTINEL] * (2 * len(batch) - 1)
    spaced[::2] = batch
    text = _ENCODE_ROWS(spaced)[1:-1]
    if text.count(_SEPARATOR) == len(batch) - 1:
        return text.replace(_SEPARATOR, ",\n  ")
    return ",\n  ".join(map(_ENCODE_ROWS, batch))  # a row holds the sentinel itself


def rows_piece(batch: list, first: bool) -> str:
    """The text of one batch of rows (at most ROWS_PER_PIECE), led by what comes before it."""
    return ("\n  " if first else ",\n  ") + _encode_rows(batch)


def _lines(values: dict, last: bool) -> Iterator[str]:
    keys = sorted(values)
    for i, key in enumerate(keys):
        comma = "" if last and i == len(keys) - 1 else ","
        yield f" {_ENCODE(key)}: {_ENCODE(values[key])}{comma}\n"


def artefact_pieces(head: dict, rows: Iterable, end: Callable[[], dict]) -> Iterator:
    """The artefact's text: ``head`` (every top-level key known before retrieval; the
    ``question_fields`` key is added here), then each of ``rows`` (version 2 rows, lists or
    tuples in QUESTION_FIELDS order) as it comes, then ``end()`` (called once the rows are
    exhausted: the summary and the other END_KEYS), each batch of rows as one piece."""
    misplaced = sorted((set(head) & END_KEYS) | {"questions"} & set(head))
    if misplaced:
        raise ValueError(f"keys written after the questions given before them: {misplaced}")
    yield "{\n"
    yield from _lines({**head, "question_fields": list(QUESTION_FIELDS)}, last=False)
    yield ' "questions": ['
    first = True
    for batch in _batches(rows, ROWS_PER_PIECE):
        yield rows_piece(batch, first)
        first = False
    tail = end()
    early = sorted(set(tail) - END_KEYS)
    if early:
        raise ValueError(f"keys known before the questions given after them: {early}")
    yield "\n ],\n" if tail else "\n ]\n"
    yield from _lines(tail, last=True)
    yield "}\n"
