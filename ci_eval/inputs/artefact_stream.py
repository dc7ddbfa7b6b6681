"""A run artefact checked without being held: its head typed, its rows looked at one at a time.

``ci-eval merge`` reads parts of up to a million questions between them. A part in the
writer's layout (docs/artefact.md: one row a line) is checked by one pass over its lines: the
keys before the rows parsed with every check of ``parse_json``, each row line by itself as
inputs/artefact_file.py's fast path reads it (schema, meaning, finite numbers, ids unique),
then the keys after the rows, the whole header held to the schema. What is kept is the typed
head (core/artefact/run_head.py) and the question ids; the rows are read again, a line at a time,
while the merge writes (inputs/artefact_out.written_rows). A part in any other layout, or
one any check refuses, is read whole by the full parse, which words the refusal.
"""

from __future__ import annotations

import json
import os
import stat
from contextlib import contextmanager

from ci_eval.core.artefact.merge import Part
from ci_eval.errors import InputError
from ci_eval.inputs.files import decode, parse_json, read_bytes, reject_constant

_ROWS_LINE = b' "questions": [\n'
_CLOSING = (b" ],\n", b" ]\n")


def read_part(path: str | os.PathLike, max_bytes: int | None = None, source: str | None = None) -> Part:
    """The part at ``path`` (any artefact; the merge refuses one that is not a part), checked
    as untrusted input: its typed head and its question ids. ``source``: how messages name
    it (default: the path)."""
    from ci_eval.inputs import loaders

    limit = loaders.MAX_ARTEFACT_BYTES if max_bytes is None else max_bytes
    source = str(path) if source is None else source
    streamed = _streamed(path, source, limit)
    if streamed is not None:
        return streamed
    try:
        raw = read_bytes(path, "run artefact", limit)
    except InputError as exc:
        raise InputError(exc.message, source, exc.place) from None
    return part_of_data(source, checked_data(raw, source))


def checked_data(raw: bytes, source: str) -> dict:
    """An artefact's bytes parsed whole and checked (schema, then meaning), as JSON."""
    from ci_eval.inputs.loaders import MAX_ARTEFACT_BYTES, _checked_artefact

    if len(raw) > MAX_ARTEFACT_BYTES:
        raise InputError(f"run artefact is over the {MAX_ARTEFACT_BYTES:,}-byte limit", source)
    return _checked_artefact(parse_json(decode(raw, source), source), source)


def part_of_data(source: str, data: dict) -> Part:
    """A checked artefact of either version, as the merge sees it."""
    from ci_eval.core.artefact.run_head import read_run_head

    questions = data["questions"]
    ids = [row[0] for row in questions] if data["schema_version"] == 2 else [q["id"] for q in questions]
    return Part(source, read_run_head(data), ids)


def read_rankings(raw: bytes, source: str) -> dict[str, list[str]]:
    """Every question's whole ranking (chunk ids, best first) of an artefact's bytes, checked
    as untrusted input: the labelling pool reads all of each ranking, not just the top."""
    from ci_eval.core.artefact.artefact import rankings

    return rankings(checked_data(raw, source))


def checked_rows(path: str | os.PathLike) -> list[list]:
    """Every version 2 row of the artefact at ``path``, read whole and checked (version 1
    objects turned into rows): for a part not in the writer's layout."""
    from ci_eval.core.artefact.question_row import to_row
    from ci_eval.inputs import loaders

    data = checked_data(read_bytes(path, "run artefact", loaders.MAX_ARTEFACT_BYTES), str(path))
    if data["schema_version"] == 2:
        return data["questions"]
    return [to_row(q, data["metrics"]) for q in data["questions"]]


@contextmanager
def _regular(path, limit: int):
    """The file opened for reading when it is a regular file within ``limit``, else None
    (the full read then says what is wrong with it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        yield None
        return
    try:
        info = os.fstat(fd)
        regular = stat.S_ISREG(info.st_mode) and info.st_size <= limit
    except OSError:
        regular = False
    if not regular:  # a folder, a FIFO, a device, too large: the full read words it
        os.close(fd)
        yield None
        return
    with os.fdopen(fd, "rb") as fh:
        yield fh


def _streamed(path, source: str, limit: int) -> Part | None:
    with _regular(path, limit) as fh:
        if fh is None:
            return None
        head = []
        for line in fh:
            if line == _ROWS_LINE:
                break
            head.append(line)
        else:
            return None
        return _checked_stream(fh, b"".join(head), source)


def _start(head: bytes, source: str) -> dict | None:
    """The keys before the rows, as a document of their own."""
    try:
        data = parse_json(decode(head.rstrip().removesuffix(b",") + b"\n}", source), source)
    except InputError:
        return None
    if not isinstance(data, dict) or data.get("schema_version") != 2 or not isinstance(data.get("metrics"), list):
        return None
    return data


def _row_lines(fh):
    """(row line, whether it is the last one) up to the closing line, then the closing
    line itself as (line, None); a file that ends before it yields (b"", None)."""
    pending = next(fh, b"")
    while pending not in _CLOSING and pending:
        line = next(fh, b"")
        yield pending, line in _CLOSING
        pending = line
    yield pending, None


def _checked_stream(fh, head: bytes, source: str) -> Part | None:
    from ci_eval.core.artefact.artefact import relevance_level
    from ci_eval.core.artefact.artefact_checks import check_row, header_problems, new_problems, row_view
    from ci_eval.core.artefact.artefact_rows import question_row_v2_valid
    from ci_eval.inputs.artefact_file import MAX_ROWS, row_finite

    start = None if _needs_full_parse(head) else _start(head, source)
    if start is None:
        return None
    problems = new_problems(start, source)
    header_problems(start, problems)
    metrics, views, closing = start["metrics"], [], b""
    level = relevance_level(start)
    for i, (line, last) in enumerate(_row_lines(fh)):
        if last is None:
            closing = line
            break
        row = _row(line, last)
        if row is None or i >= MAX_ROWS or not question_row_v2_valid(row) or not row_finite(row):
            return None
        check_row(row, i, metrics, problems)
        if problems.found:
            return None
        views.append(row_view(row, level))
    if not closing:
        return None
    return _finished(head, closing, fh.read(), views, problems, source)


def _row(line: bytes, last: bool):
    """One row line's row, or None when it is not one compact row of the writer's."""
    if not line.startswith(b"  [") or not line.endswith(b"\n") or line.endswith(b",\n") == last:
        return None
    if _needs_full_parse(line):
        return None
    try:
        return json.loads(line[2: len(line) - (1 if last else 2)].decode("utf-8"), parse_constant=reject_constant)
    except (ValueError, RecursionError):  # JSON, UTF-8, NaN, a number too long
        return None


def _needs_full_parse(line: bytes) -> bool:
    from ci_eval.inputs.artefact_file import NEEDS_FULL_PARSE

    return NEEDS_FULL_PARSE.search(line) is not None


def _finished(head: bytes, closing: bytes, tail: bytes, views: list, problems, source: str) -> Part | None:
    """The whole header (the keys before and after the rows) held to the schema, then the
    checks across the rows; the typed part."""
    from ci_eval.core.artefact.artefact import SCHEMAS, shell_valid
    from ci_eval.core.artefact.artefact_checks import whole_problems
    from ci_eval.core.artefact.run_head import read_run_head
    from ci_eval.schemas import load

    if _needs_full_parse(tail):
        return None
    text = head + tail if closing == b" ],\n" else head.rstrip(b"\n").removesuffix(b",") + b"\n" + tail
    try:
        data = parse_json(decode(text, source), source)
    except InputError:
        return None
    if (not isinstance(data, dict) or data.get("schema_version") != 2 or "questions" in data
            or not shell_valid({**data, "questions": []}, load(SCHEMAS[2]))):
        return None
    ids = [view["id"] for view in views]
    if len(set(ids)) != len(ids):
        return None
    whole_problems(data, views, problems)
    return None if problems.found else Part(source, read_run_head(data), ids)
