"""Index manifest files -> core.manifest.ChunkIndex.

Three forms, told apart without guessing from content alone:
- ``.jsonl`` / ``.ndjson``: JSON lines, read as a stream (millions of chunks without holding
  the file in memory): one entry per line, optionally a first line ``{"version": ...}``;
- a file whose text starts with ``{`` or ``[``: one JSON document;
- anything else: one chunk id per line, blank lines and ``#`` comments skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

from ci_eval.core.gold.manifest import ChunkIndex, build_index, index_from_document
from ci_eval.errors import InputError
from ci_eval.inputs.files import (
    SURROGATE_ESCAPE_RE,
    decode,
    file_kind,
    parse_json,
    read_bytes,
    reject_lone_surrogates,
)

LINES_SUFFIXES = (".jsonl", ".ndjson")


def _open(path: str):
    """The manifest opened for a stream of lines, once it is known to be a regular file:
    opened without blocking, since a FIFO at the path would wait for a writer forever."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError("index manifest not found", path) from None
    except IsADirectoryError:
        raise InputError("index manifest is a folder, not a file", path) from None
    except OSError as exc:
        raise InputError(f"index manifest could not be read: {exc.strerror}", path) from None
    kind = file_kind(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise InputError(f"index manifest is {kind}, not a file", path)
    return os.fdopen(fd, "rb")


class _RepeatedKey(ValueError):
    pass


def _pairs(pairs: list) -> dict:
    # json keeps the last of two equal keys without a word: {"id": "a", "id": "b"} is b.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        raise _RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return obj


def _line_value(raw: bytes, path: str, n: int):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not valid UTF-8", path, f"line {n}") from None
    if n == 1 and text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        return None
    try:
        value = _DECODER.decode(text)
    except _RepeatedKey as exc:
        raise InputError(f"invalid JSON: the key {exc.args[0]!r} appears twice in one object", path,
                         f"line {n}") from None
    except ValueError as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise InputError(f"invalid JSON: {msg}", path, f"line {n}") from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path, f"line {n}") from None
    if SURROGATE_ESCAPE_RE.search(text):  # "\ud800" alone parses but is no character
        try:
            reject_lone_surrogates(value, path)
        except InputError as exc:
            raise InputError(exc.message, path, f"line {n}") from None
    return value


def _no_constant(name: str):
    raise ValueError(f"{name} is not allowed")


# One decoder for every line: json.loads with an option builds a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_no_constant, object_pairs_hook=_pairs)


def _stream(fh, path: str, header: dict) -> Iterator[tuple[int, object]]:
    first = True
    for n, raw in enumerate(fh, 1):
        value = _line_value(raw, path, n)
        if value is None:
            continue
        if isinstance(value, dict) and "id" not in value and "version" in value:
            if not first:
                raise InputError('the {"version": "..."} header must come before every chunk', path, f"line {n}")
            if set(value) != {"version"} or not isinstance(value["version"], str):
                raise InputError('a header line is {"version": "..."} and nothing else', path, f"line {n}")
            header["version"] = value["version"]
        else:
            yield n, value
        first = False


def read_manifest_lines(path: str, version: str | None = None) -> ChunkIndex:
    """A JSON-lines manifest, one line at a time."""
    header: dict = {}
    with _open(path) as fh:
        # The header is read before any chunk, so the version is known when the stream ends.
        index = build_index(_stream(fh, path, header), None, path)
    index.version = header.get("version") or version
    return index


def read_manifest(path: str | os.PathLike, version: str | None = None) -> ChunkIndex:
    """The manifest at ``path``; ``version`` is used when the file names none."""
    path = str(path)
    if path.lower().endswith(LINES_SUFFIXES):
        return read_manifest_lines(path, version)
    text = decode(read_bytes(path, "index manifest"), path)
    # JSON when it looks like JSON: a bare list of ids must not be read as one id per line.
    if text.lstrip().startswith(("{", "[")):
        return index_from_document(parse_json(text, path), path, version)
    ids = (line.strip() for line in text.split("\n"))
    entries = ((n, i) for n, i in enumerate(ids, 1) if i and not i.startswith("#"))
    return build_index(entries, version, path, repeats_ok=True)


def manifest_from_value(data, source: str, version: str | None = None) -> ChunkIndex:
    """What an ``index.callable`` returned, held to the same rules as a JSON manifest."""
    return index_from_document(data, source, version)
