"""Run artefacts out to disk as they are made, and a written part's rows back, one at a time.

The text comes from core/artefact/artefact_writer.py a piece at a time; it lands in a temporary file
beside the destination that is renamed over it at the end (inputs/files.py), so nothing is
ever half-written and a run holds none of its rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass

from ci_eval.errors import InputError


@dataclass(frozen=True)
class RunWritten:
    """A run artefact once written: where, its top-level keys but the rows (summary and
    history included), and the columns gathered from its rows as they streamed past
    (core/artefact/run_columns.py: counts, the first error, example ids)."""

    path: str
    header: dict
    columns: object
    size: int

    @property
    def head(self):
        """The header typed (core/artefact/run_head.RunHead), summary included."""
        from ci_eval.core.artefact.run_head import read_run_head

        return read_run_head(self.header)

    @property
    def totals(self):
        """Its summary as the terminal prints it (core/artefact/run_head.RunTotals)."""
        from ci_eval.core.artefact.run_head import run_totals

        return run_totals(self.head)


def write_artefact(destination: str | os.PathLike, pieces, questions: int, limit: int | None = None) -> int:
    """Stream an artefact's text to ``destination`` atomically; refused, nothing written,
    when a later run could not read it back as its baseline (``limit``, by default
    loaders.MAX_ARTEFACT_BYTES as it is when called). Returns its size in bytes."""
    from ci_eval.inputs import loaders
    from ci_eval.inputs.files import TooLarge, atomic_write_pieces

    limit = loaders.MAX_ARTEFACT_BYTES if limit is None else limit
    try:
        return atomic_write_pieces(destination, pieces, limit)
    except TooLarge as exc:
        raise InputError(
            f"the run artefact would be over the {limit:,}-byte limit a later run reads as its baseline "
            f"(past {exc.size:,} bytes, {questions:,} questions): every pull request would skip it; "
            "measure fewer questions or a smaller retriever.depth",
            str(destination),
        ) from None


def write_rows(destination, head: dict, rows, columns, end, questions: int, limit: int | None = None,
               probe=None) -> int:
    """``head``, then ``rows`` (each also handed to ``columns``), then ``end()``, streamed.
    ``probe`` is ``(after, known, check)``: once ``after`` rows are written, ``check`` is
    given what they say of the size (core/artefact/artefact_size.SizeProbe; ``known(n)``:
    the first ``n`` rows' gold-set bytes) and may raise to stop the run there, nothing
    written."""
    from ci_eval.core.artefact.artefact_writer import artefact_pieces
    from ci_eval.core.artefact.question_row import FIELD

    seen: list = []  # the first rows' rankings, for the depth a stopped run is advised
    count = [0]
    after = probe[0] if probe is not None else 0
    ranking = FIELD["ranking"]

    def counted():
        for row in rows:
            columns.add(row)
            if count[0] < after:
                seen.append(row[ranking])
            count[0] += 1
            yield row

    pieces = artefact_pieces(head, counted(), end)
    if probe is not None:
        pieces = _probed(pieces, count, seen, after, *probe[1:])
    return write_artefact(destination, pieces, questions, limit)


def _probed(pieces, count: list, seen: list, after: int, known, check):
    """The pieces, passed on; their bytes counted until ``after`` rows have gone by (rows
    come a batch a piece, after the head's pieces), then ``check`` called once."""
    from ci_eval.core.artefact.artefact_size import SizeProbe

    written = head = 0
    pieces = iter(pieces)
    for piece in pieces:
        written += len(piece.encode("utf-8"))
        yield piece
        if piece.endswith('"questions": ['):
            head = written
            break
    for piece in pieces:
        written += len(piece.encode("utf-8"))
        yield piece
        if count[0] >= after:
            check(SizeProbe(count[0], written, head, known(count[0]), tuple(seen)))
            break
    yield from pieces


def write_merged(destination, parts, rows, history=None) -> RunWritten:
    """Merge checked parts (core.merge.Part) into ``destination``: ``rows`` holds one row
    iterator a part, each row held to its own gold and ranking (core/artefact/row_recheck.py) as it
    passes; ``history()`` (when given) replaces the parts' history at the end."""
    from ci_eval.core.artefact.merge import check_parts, merged_end, merged_head, merged_rows
    from ci_eval.core.artefact.row_recheck import rechecked_rows
    from ci_eval.core.artefact.run_columns import RunColumns

    records = check_parts(parts)
    head = merged_head(parts)
    level = head["config"].get("relevance_level", 1)
    rows = [rechecked_rows(part_rows, part.source, head["metrics"], head["k"], level)
            for part, part_rows in zip(parts, rows)]
    retriever = head["config"].get("retriever") or {}
    columns = RunColumns(head["metrics"], head["abstain_below"], head["k"], retriever.get("depth"))
    tail: dict = {}

    def end() -> dict:
        tail.update(merged_end(parts, columns, history))
        return tail

    size = write_rows(destination, head, merged_rows(records, rows), columns, end, sum(len(p.ids) for p in parts))
    return RunWritten(str(destination), {**head, **tail}, columns, size)


_OPEN = ' "questions": ['


def written_rows(path: str | os.PathLike, ids: list[str], metrics) -> Iterator:
    """The version 2 rows of an artefact already read and checked once (``ids``: its
    question ids then), read again a line at a time so a merge holds no part whole;
    version 1 objects are turned into rows on the way. A file not in the writers' layout
    (one question a line) is read whole again."""
    from ci_eval.core.artefact.question_row import to_row

    with open(path, encoding="utf-8") as fh:
        rows = _row_lines(fh)
        first = next(rows, None)
        if first is None and ids or first is False:
            yield from _whole(path, ids, metrics)
            return
        pending = [] if first is None else [first]
        for expected in ids:
            row = pending.pop() if pending else next(rows, None)
            if isinstance(row, dict):
                row = to_row(row, metrics)
            if not isinstance(row, list) or row[0] != expected:
                raise InputError("changed while it was merged", str(path))
            yield row


def _row_lines(fh) -> Iterator:
    """Each question line's value; False for the first line when the layout is not the
    writers' (nothing else read)."""
    for line in fh:
        if line.rstrip("\n") == _OPEN:
            break
    else:
        yield False
        return
    for n, line in enumerate(fh):
        text = line.strip()
        if text in ("]", "],"):
            return
        try:
            yield json.loads(text.removesuffix(","))
        except ValueError:
            if n == 0:
                yield False
            return


def _whole(path, ids: list[str], metrics) -> Iterator:
    from ci_eval.inputs.artefact_stream import checked_rows

    rows = checked_rows(path)
    if [row[0] for row in rows] != ids:
        raise InputError("changed while it was merged", str(path))
    yield from rows
