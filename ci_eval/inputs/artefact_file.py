"""A run artefact file -> the typed ``Artefact`` a comparison reads.

A version 2 artefact is written one question row per line (docs/artefact.md). It is read from
the file a chunk at a time (``read_blocks``), never held whole: the keys before the rows and
after them are parsed as one small document with every hostile-input check of
``parse_json``; the rows a piece of whole lines at a time (about 32 KB): the piece's bytes
decoded by msgspec straight into the schema's types and bounds, then held to what types
cannot say (inputs/typed_rows.py, the per-row verdict), cut into fields, typed and dropped,
so no ranking is held either. That is only safe because a row holds no object (so no key
can repeat: msgspec, like json, would keep the last), and because the decoder refuses what
the full parse refuses (invalid UTF-8, NaN and Infinity, a number that overflows, a lone
surrogate; a surrogate escape of any kind, found by a search of each block's bytes, sends the
file to the full parse first). A block is a comma-separated run of whole rows or the file is
not the writer's: JSON strings hold no raw newline, so a block cut inside a row leaves a
bracket open and fails to decode. Anything else that differs from the writer's layout or
fails a check is read again whole by the full parse, which accepts any valid JSON of the same
content and words every refusal as it always has: the fast path never refuses, it only steps
aside. The layout's cutting and the head's checks (``read_layout``) serve ``ci-eval history``
too, which reads only a few fields of each row (inputs/history_file.py).
"""

from __future__ import annotations

import os
import re

from ci_eval.core.artefact.artefact import (
    SCHEMAS,
    Artefact,
    add_block,
    kept_depth,
    read_artefact,
    relevance_level,
    shell_valid,
    typed_artefact,
)
from ci_eval.core.artefact.question_columns import QuestionColumns, Questions
from ci_eval.core.artefact.row_blocks import row_finite  # noqa: F401 (merge's part reader)
from ci_eval.core.measure.metric_table import MetricTable
from ci_eval.errors import InputError
from ci_eval.inputs.files import SURROGATE_ESCAPE, decode, parse_json, read_blocks, read_bytes
from ci_eval.inputs.loaders import MAX_ARTEFACT_BYTES, _checked_artefact
from ci_eval.inputs.typed_rows import decoded_block
from ci_eval.schemas import load

NEEDS_FULL_PARSE = re.compile(SURROGATE_ESCAPE.encode())
_ROWS_START = b'\n "questions": [\n'
_CLOSINGS = (b" ],\n", b" ]\n")
MAX_ROWS = 1_000_000  # the schema's maxItems
# Rows decoded, checked and filled about this many bytes at a time: their objects (about three
# times the text) are still in the processor's cache when the columns are filled from them
# field by field. A megabyte at a time took half as long again (measured with json's parse,
# before msgspec; not measured again).
_PIECE = 32 * 1024


def read_run(path: str | os.PathLike, top: int = 0, max_bytes: int = MAX_ARTEFACT_BYTES,
             shared: Artefact | None = None) -> Artefact:
    """The run artefact at ``path`` (version 1 or 2), checked as untrusted input and typed;
    ``top``: keep at least that many of each ranking's top results (read_artefact). The file
    is read a chunk at a time by the writer's layout, and read again whole only when its
    layout is another. ``shared``: an artefact read before, whose question and chunk id
    strings this one uses too (base and head name mostly the same ids)."""
    source = str(path)
    strings = shared.columns.strings if shared is not None else None
    fast = _by_lines(read_blocks(path, "run artefact", max_bytes), source, top, strings)
    if fast is not None:
        return fast
    return _full_parse(read_bytes(path, "run artefact", max_bytes), source, top)


def read_run_data(path: str | os.PathLike, max_bytes: int = MAX_ARTEFACT_BYTES) -> dict:
    """The run artefact at ``path`` as its checked dict (version 1 or 2), read whole: for a
    caller that writes runs of its own from it (``ci-eval selftest``)."""
    source = str(path)
    raw = read_bytes(path, "run artefact", max_bytes)
    return _checked_artefact(parse_json(decode(raw, source), source), source)


def run_from_bytes(raw: bytes, source: str, top: int = 0) -> Artefact:
    if len(raw) > MAX_ARTEFACT_BYTES:
        raise InputError(f"run artefact is over the {MAX_ARTEFACT_BYTES:,}-byte limit", source)
    fast = _by_lines(raw, source, top)
    return fast if fast is not None else _full_parse(raw, source, top)


def _full_parse(raw: bytes, source: str, top: int) -> Artefact:
    data = parse_json(decode(raw, source), source)
    return read_artefact(_checked_artefact(data, source), top)


def _blocks(chunks):
    """The file's bytes as blocks of whole lines (the last may lack its newline)."""
    carry = b""
    for chunk in chunks:
        buf = carry + chunk
        cut = buf.rfind(b"\n") + 1
        carry = buf[cut:]
        if cut:
            yield buf[:cut]
    if carry:
        yield carry


class _Layout:
    """The file cut by the writer's layout as it streams by: the keys before the rows
    (``head``), the rows' blocks (``rows``, a generator), the keys after them (``tail``);
    ``ok`` turns False when the layout is not the writer's."""

    def __init__(self, chunks):
        self.ok, self.tail = True, b""
        self._blocks = _blocks(chunks)
        self.head, self._first = self._find_head()

    def _find_head(self) -> tuple[bytes, bytes]:
        """The bytes up to the newline before ``"questions"``, and the rest of that block.
        Each block is searched once, with the previous block's last byte (the newline the
        marker starts with), so a file with no marker costs one pass."""
        parts, last = [], b""
        for block in self._blocks:
            at = (last + block).find(_ROWS_START) - len(last)
            if at >= -len(last):
                return b"".join(parts) + block[: at + 1], block[at + len(_ROWS_START):]
            parts.append(block)
            last = block[-1:]
        self.ok = False
        return b"", b""

    def rows(self):
        """Each block of row lines, up to the line closing the list."""
        block, blocks = self._first, self._blocks
        while True:
            close = 0 if block.startswith(b" ]") else block.find(b"\n ]") + 1
            if close > 0 or block.startswith(b" ]"):
                if block[:close]:
                    yield block[:close]
                self._finish(block[close:])
                return
            if block:
                yield block
            block = next(blocks, None)
            if block is None:  # the list never closed
                self.ok = False
                return

    def _finish(self, rest: bytes) -> None:
        closing = next((c for c in _CLOSINGS if rest.startswith(c)), None)
        if closing is None:
            self.ok = False
            return
        self.tail = b"".join([rest[len(closing):], *self._blocks])
        if closing == b" ]\n":  # the questions were the last key: drop the comma before them
            self.head = self.head.rstrip(b"\n").removesuffix(b",") + b"\n"


def _piece_bytes(block: bytes, first: bool, open_comma: bool):
    """A block of whole row lines -> (its bytes less the newline and comma after its last row,
    whether it had that comma), or None when it cannot be a comma-separated run of rows that
    joins the previous block's. The bytes are handed on undecoded: msgspec checks their UTF-8
    as it decodes them."""
    if NEEDS_FULL_PARSE.search(block):  # a surrogate escape: the full parse decides
        return None
    if not (first or open_comma):
        return None  # a missing comma between two rows
    body = block.rstrip(b"\n")
    comma = body.endswith(b",")
    return (body[:-1] if comma else body), comma


def _keys(text: bytes, source: str) -> dict | None:
    """Keys other than the questions, parsed as one document with every check."""
    try:
        data = parse_json(decode(text, source), source)
    except InputError:
        return None
    return data if isinstance(data, dict) and "questions" not in data else None


def _header(head: bytes, tail: bytes, source: str) -> dict | None:
    """Every key but the questions."""
    data = _keys(head + tail, source)
    return data if data is not None and data.get("schema_version") == 2 else None


def _early(head: bytes, source: str) -> dict | None:
    """The keys before the rows, read before them (the metric names, k, the config); checked
    again with the keys after the rows once those are read."""
    return _keys(head.rstrip(b"\n").removesuffix(b",") + b"\n}", source)


def _by_lines(chunks, source: str, top: int, strings: dict | None = None) -> Artefact | None:
    """The artefact by the writer's line layout, or None to take the full parse (``chunks``:
    the file's bytes, whole or in chunks)."""
    read = _checked_lines(chunks, source, top, strings)
    return None if read is None else typed_artefact(*read)


def read_layout(chunks, source: str, read_rows, piece: int = _PIECE):
    """An artefact by the writer's line layout, as (header, problems, rows): its header (every
    key but the questions) parsed with every check of ``parse_json``, held to the schema's
    shell and to the header's checks (``header_problems``); ``rows``, what
    ``read_rows(pieces, early)`` made of its rows (``pieces``: their bytes, a piece of whole
    rows at a time, comma-separated and without the list's brackets; ``early``: the keys
    before the rows). ``problems`` is for the caller's own checks of the rows. None when the
    layout is another, a check refuses, or ``read_rows`` gives None: the caller's full read
    then words why. ``chunks``: the file's bytes, whole or in chunks."""
    from ci_eval.core.artefact.artefact_checks import header_problems, new_problems

    layout = _Layout((chunks,) if isinstance(chunks, bytes) else chunks)
    if not layout.ok or layout.head.startswith(b"\xef\xbb\xbf"):
        return None
    early = _early(layout.head, source)
    if early is None or not isinstance(early.get("metrics"), list):
        return None
    rows = read_rows(_row_pieces(layout, piece), early)
    if rows is None or not layout.ok:
        return None
    data = _header(layout.head, layout.tail, source)
    if data is None or any(data.get(key) != value for key, value in early.items()):
        return None
    if not shell_valid({**data, "questions": []}, load(SCHEMAS[2])):
        return None
    problems = new_problems(data, source)
    header_problems(data, problems)
    return None if problems.found else (data, problems, rows)


def _checked_lines(chunks, source: str, top: int, strings: dict | None):
    """(header, questions, kept depth) of an artefact by the writer's line layout, every
    check passed; None to take the full parse."""
    from ci_eval.core.artefact.artefact_checks import column_problems

    def rows(pieces, early: dict):
        depth = kept_depth(early, top)
        questions = _read_rows(pieces, tuple(early["metrics"]), relevance_level(early), depth, strings)
        return None if questions is None else (questions, depth)

    read = read_layout(chunks, source, rows)
    if read is None:
        return None
    data, problems, (questions, depth) = read
    columns = questions.columns
    if len(set(columns.ids)) != len(columns):
        return None
    column_problems(data, columns, problems)
    return None if problems.found else (data, questions, depth)


def _row_pieces(layout: _Layout, size: int):
    """The bytes of the rows' pieces (``_piece_bytes``), about ``_PIECE`` bytes each; at the
    first piece that cannot be a run of rows joining the one before, or past ``MAX_ROWS``
    rows, ``layout.ok`` turns False and no piece follows."""
    open_comma, first, rows = False, True, 0
    for block in layout.rows():
        for piece in _pieces(block, size):
            cut = _piece_bytes(piece, first, open_comma)
            rows += piece.count(b"\n") + (not piece.endswith(b"\n"))  # JSON strings hold no newline
            if cut is None or rows > MAX_ROWS:
                layout.ok = False
                return
            body, open_comma = cut
            first = False
            yield body
    if open_comma:
        layout.ok = False


def _read_rows(pieces, metrics: tuple, level, depth: int, strings: dict | None):
    """Every row checked and typed, a piece at a time; None at the first row the fast path
    cannot take."""
    columns = QuestionColumns(MetricTable(metrics), strings)
    for body in pieces:
        if not _add_rows(columns, body, len(metrics), level, depth):
            return None
    columns.table.finish()
    return Questions(columns)


def _pieces(block: bytes, size: int):
    """A block of whole lines as runs of whole lines of about ``size`` bytes."""
    start, end = 0, len(block)
    while start < end:
        cut = block.find(b"\n", start + size) + 1 or end
        yield block[start:cut]
        start = cut


def _add_rows(columns: QuestionColumns, body: bytes, metrics: int, level, depth: int) -> bool:
    """The rows of a piece's bytes into ``columns``: decoded and checked (inputs/typed_rows.py),
    then filled a field at a time; False when a row is one the fast path cannot take."""
    block = decoded_block(body, metrics)
    if block is None:
        return False
    add_block(columns, block, level, depth)
    return True
