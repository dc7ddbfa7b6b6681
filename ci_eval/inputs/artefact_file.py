"""A run artefact file -> the typed ``Artefact`` a comparison reads.

A version 2 artefact is written one question row per line (docs/design.md): its header lines
are parsed as one small document with every hostile-input check of ``parse_json``, and each
row line by itself with json's C parser and no hooks, checked, typed and dropped, so neither
the whole document nor any ranking is ever held. That is only safe because a row holds no
object (so no key can repeat), because NaN and Infinity are refused by ``parse_constant``, a
number that overflowed to inf is caught by the sum of the row's numbers not being finite, and
a lone surrogate escape, found by one search of the bytes, sends the file to the full parse.
Anything else
that differs from the writer's layout or fails a check is read again by the full parse,
which accepts any valid JSON of the same content and words every refusal as it always has:
the fast path never refuses, it only steps aside.
"""

from __future__ import annotations

import gc
import json
import math
import os
import re
from contextlib import contextmanager

from ci_eval.core.artefact import (
    SCHEMAS,
    Artefact,
    QuestionResult,
    kept_depth,
    read_artefact,
    read_row,
    relevance_level,
    shell_valid,
    typed_artefact,
)
from ci_eval.core.metric_table import MetricTable
from ci_eval.core.question_row import FIELD
from ci_eval.errors import InputError
from ci_eval.inputs.files import SURROGATE_ESCAPE, decode, parse_json, read_bytes, reject_constant
from ci_eval.inputs.loaders import MAX_ARTEFACT_BYTES, _checked_artefact

_NEEDS_FULL_PARSE = re.compile(SURROGATE_ESCAPE.encode())
_ROWS_START = b'\n "questions": [\n'
_MAX_ROWS = 1_000_000  # the schema's maxItems


def read_run(path: str | os.PathLike, top: int = 0, max_bytes: int = MAX_ARTEFACT_BYTES) -> Artefact:
    """The run artefact at ``path`` (version 1 or 2), checked as untrusted input and typed;
    ``top``: keep at least that many of each ranking's top results (read_artefact)."""
    return run_from_bytes(read_bytes(path, "run artefact", max_bytes), str(path), top)


def run_from_bytes(raw: bytes, source: str, top: int = 0) -> Artefact:
    if len(raw) > MAX_ARTEFACT_BYTES:
        raise InputError(f"run artefact is over the {MAX_ARTEFACT_BYTES:,}-byte limit", source)
    with _no_collection():
        fast = _by_lines(raw, source, top)
        if fast is not None:
            return fast
        data = parse_json(decode(raw, source), source)
        return read_artefact(_checked_artefact(data, source), top)


@contextmanager
def _no_collection():
    """Reading allocates millions of objects that all stay alive, no cycle among them: the
    cycle collector would walk the growing heap again and again (reading 100,000 questions
    took twice as long with it), so it waits until the read is done; then what was read is
    moved out of its sight (``gc.freeze``), so the comparison's own collections do not walk
    the artefacts either."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


def _row_block(raw: bytes) -> tuple[int, int, int] | None:
    """Where the rows are: (the first row's offset, the offset of the line closing the
    list, the offset just past that line); None when the layout is not the writer's."""
    start = raw.find(_ROWS_START)
    if start < 0 or raw.startswith(b"\xef\xbb\xbf"):
        return None
    first = start + len(_ROWS_START)
    for closing in (b"\n ],\n", b"\n ]\n"):
        end = raw.find(closing, first - 1)
        if end >= 0:
            return first, end + 1, end + len(closing)
    return None


def _header(raw: bytes, block: tuple[int, int, int], source: str) -> dict | None:
    """Every key but the questions, parsed as one document with every check."""
    first, close, after = block
    head = raw[: first - len(_ROWS_START) + 1]  # up to the newline before "questions"
    tail = raw[after:]
    if raw[close:after].startswith(b" ],"):
        text = head + tail
    else:  # the questions were the last key: drop the comma before them
        text = head.rstrip(b"\n").removesuffix(b",") + b"\n" + tail
    try:
        data = parse_json(decode(text, source), source)
    except InputError:
        return None
    if not isinstance(data, dict) or data.get("schema_version") != 2 or "questions" in data:
        return None
    return data


def _rows(raw: bytes, first: int, close: int):
    """Each row line's row, or None for a line that is not one compact row."""
    position = first
    while position < close:
        end = raw.index(b"\n", position)
        line = raw[position:end]
        position = end + 1
        last = position >= close
        if not line.startswith(b"  [") or line.endswith(b",") == last:
            yield None
            return
        try:
            yield json.loads(line[2: len(line) - (not last)].decode("utf-8"), parse_constant=reject_constant)
        except (ValueError, RecursionError):  # JSON, UTF-8, NaN, a number too long
            yield None
            return


def _finite(row: list) -> bool:
    """Whether no number of a valid row overflowed to inf: then their sum is finite (a sum
    that overflows only sends the row to the full parse, which finds nothing)."""
    total = sum(v for v in row[FIELD["metrics"]] if v is not None)
    total += sum(score for _, score in row[FIELD["ranking"]])
    for name in ("top_score", "latency_ms", "judged_at_k"):
        if row[FIELD[name]] is not None:
            total += row[FIELD[name]]
    return math.isfinite(total)


def _by_lines(raw: bytes, source: str, top: int) -> Artefact | None:
    """The artefact by the writer's line layout, or None to take the full parse."""
    from ci_eval.core.artefact_checks import check_row, header_problems, new_problems, whole_problems
    from ci_eval.core.artefact_rows import question_row_v2_valid
    from ci_eval.schemas import load

    block = None if _NEEDS_FULL_PARSE.search(raw) else _row_block(raw)
    data = _header(raw, block, source) if block else None
    if data is None or not shell_valid({**data, "questions": []}, load(SCHEMAS[2])):
        return None
    problems = new_problems(data, source)
    header_problems(data, problems)
    metrics, level, depth = tuple(data["metrics"]), relevance_level(data), kept_depth(data, top)
    questions: list[QuestionResult] = []
    table, shared = MetricTable(metrics), {}
    for i, row in enumerate(_rows(raw, block[0], block[1])):
        if row is None or i >= _MAX_ROWS or not question_row_v2_valid(row) or not _finite(row):
            return None
        check_row(row, i, data["metrics"], problems)
        if problems.found:
            return None
        questions.append(read_row(row, metrics, level, depth, table, shared))
    views = [{"id": q.id, "status": q.status, "tags": q.tags} for q in questions]
    if len({q.id for q in questions}) != len(questions):
        return None
    whole_problems(data, views, problems)
    return None if problems.found else typed_artefact(data, tuple(questions), depth, table.finish())
