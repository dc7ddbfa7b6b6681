"""The index manifest: one entry per chunk of the current index.

An entry is ``{"id": ...}`` and, optionally, where the chunk came from (``doc``, the
character span ``start``..``end`` in it) and what it says (``text``, or ``hash``: the sha256
of its whitespace-normalised text). Today's manifests, bare lists of ids, are entries with
nothing but the id. The richer the entries, the more stale gold ids ``ci-eval gold remap``
can map back (see docs/gold-lifecycle.md).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ci_eval.core.gold.fingerprint import text_hash
from ci_eval.errors import InputError, InputErrors

_HEX64 = re.compile(r"[0-9a-f]{64}")
_KEYS = frozenset({"id", "doc", "start", "end", "text", "hash"})
# Enough errors to see the pattern in a broken million-line file, not a million lines.
MAX_PROBLEMS = 20


@dataclass(frozen=True, slots=True)
class Chunk:
    id: str
    doc: str | None = None
    start: int | None = None
    end: int | None = None
    hash: str | None = None  # from ``text`` when the entry gives text
    text: str | None = None

    @property
    def has_span(self) -> bool:
        return self.doc is not None and self.start is not None


class ChunkIndex:
    """The chunks of one index version, with the lookups the remap needs built on first use."""

    def __init__(self, version: str | None, chunks: dict[str, Chunk], source: str):
        self.version = version
        self.chunks = chunks
        self.source = source

    @cached_property
    def ids(self) -> frozenset:
        return frozenset(self.chunks)

    @cached_property
    def by_hash(self) -> dict[str, list[str]]:
        return self.with_hashes(None)

    @cached_property
    def by_doc(self) -> dict[str, list[Chunk]]:
        return self.of_docs(None)

    def with_hashes(self, wanted: set | None) -> dict[str, list[str]]:
        """Chunk ids by text hash, for the ``wanted`` hashes only (all when None): a remap
        looks up a few thousand hashes in an index of millions."""
        out: dict[str, list[str]] = {}
        for c in self.chunks.values():
            if c.hash is not None and (wanted is None or c.hash in wanted):
                out.setdefault(c.hash, []).append(c.id)
        return out

    def cuts(self) -> str | None:
        """A digest of where the chunks are cut (every chunk's doc, start and end, ids aside),
        None when some chunk gives no span: two indexes with the same digest differ at most
        in their ids (renamed, not re-chunked)."""
        import hashlib

        spans = []
        for c in self.chunks.values():
            if c.doc is None or c.start is None or c.end is None:
                return None
            spans.append(f"{c.doc}\0{c.start}\0{c.end}")
        return hashlib.sha256("\n".join(sorted(spans)).encode("utf-8", "surrogatepass")).hexdigest() if spans else None

    def mean_chars(self) -> float | None:
        """The chunks' mean length in characters (a chunk's text, else its span), None
        when some chunk gives neither: what a comparison shows of a re-chunk."""
        total = 0
        for c in self.chunks.values():
            if c.text is not None:
                total += len(c.text)
            elif c.start is not None and c.end is not None:
                total += c.end - c.start
            else:
                return None
        return total / len(self.chunks) if self.chunks else None

    def of_docs(self, wanted: set | None) -> dict[str, list[Chunk]]:
        """The ``wanted`` documents' chunks (all when None), in span order (chunks without
        a span last, by id)."""
        out: dict[str, list[Chunk]] = {}
        for c in self.chunks.values():
            if c.doc is not None and (wanted is None or c.doc in wanted):
                out.setdefault(c.doc, []).append(c)
        for chunks in out.values():
            chunks.sort(key=lambda c: (c.start is None, c.start or 0, c.id))
        return out


def _problem(message: str, source: str, place: str) -> InputError:
    return InputError(message, source, place)


def _span(entry: dict, source: str, place: str) -> tuple[int | None, int | None]:
    start, end = entry.get("start"), entry.get("end")
    if start is None and end is None:
        return None, None
    for key, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _problem(f'"{key}" must be a whole number of characters, 0 or more '
                           '(give both "start" and "end", or neither)', source, f"{place}.{key}")
    if end < start:
        raise _problem(f'"end" ({end}) is before "start" ({start})', source, f"{place}.end")
    if not isinstance(entry.get("doc"), str):
        raise _problem('a span ("start", "end") needs the "doc" it is a span of', source, place)
    return start, end


def parse_chunk(entry: Any, source: str, place: str, docs: dict | None = None) -> Chunk:
    """One manifest entry -> Chunk; an InputError naming ``place`` when it is malformed.
    ``docs`` interns document names: one string per document, however many chunks it has."""
    if isinstance(entry, str):
        return Chunk(entry)
    if not isinstance(entry, dict):
        raise _problem("expected a chunk id or an object with an \"id\"", source, place)
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise _problem(f"unknown key {unknown[0]!r} (known: doc, end, hash, id, start, text)",
                       source, f"{place}.{unknown[0]}")
    cid = entry.get("id")
    if not isinstance(cid, str) or not cid:
        raise _problem('"id" must be a non-empty string', source, f"{place}.id")
    doc, text, digest = entry.get("doc"), entry.get("text"), entry.get("hash")
    if doc is not None and (not isinstance(doc, str) or not doc):
        raise _problem('"doc" must be a non-empty string', source, f"{place}.doc")
    if text is not None and not isinstance(text, str):
        raise _problem('"text" must be a string', source, f"{place}.text")
    if digest is not None and (not isinstance(digest, str) or not _HEX64.fullmatch(digest)):
        raise _problem('"hash" must be 64 lowercase hex digits (sha256 of the whitespace-'
                       'normalised text)', source, f"{place}.hash")
    if text is not None and digest is not None and text_hash(text) != digest:
        raise _problem('"hash" is not the sha256 of the whitespace-normalised "text"',
                       source, f"{place}.hash")
    start, end = _span(entry, source, place)
    if text is not None:
        digest = text_hash(text)
    if docs is not None and doc is not None:
        doc = docs.setdefault(doc, doc)
    return Chunk(cid, doc, start, end, digest, text)


def build_index(entries: Iterable[tuple[int, Any]], version: str | None, source: str, *,
                where: Callable[[int], str] = "line {}".format, repeats_ok: bool = False) -> ChunkIndex:
    """Chunks from ``(n, entry)`` pairs, ``where(n)`` naming the place of entry n (a line, a
    list index), every problem reported (up to MAX_PROBLEMS).
    ``repeats_ok``: a bare id listed twice is one chunk (today's ``ids`` lists allowed it)."""
    chunks: dict[str, Chunk] = {}
    # Each kept chunk's n, in insertion order: 8 bytes a chunk, not a place string.
    numbers = array("q")
    docs: dict[str, str] = {}  # one string per document name, however many chunks share it
    problems: list[InputError] = []
    for n, entry in entries:
        try:
            chunk = parse_chunk(entry, source, where(n), docs)
        except InputError as exc:
            problems.append(exc)
        else:
            if chunk.id in chunks and not (repeats_ok and chunks[chunk.id] == chunk):
                first = numbers[list(chunks).index(chunk.id)]
                problems.append(_problem(f"chunk id {chunk.id!r} appears twice (first at {where(first)})",
                                         source, where(n)))
            elif chunk.id not in chunks:
                chunks[chunk.id] = chunk
                numbers.append(n)
        if len(problems) >= MAX_PROBLEMS:
            break
    if problems:
        raise InputErrors(problems)
    return ChunkIndex(version, chunks, source)


def index_from_document(data: Any, source: str, version: str | None = None) -> ChunkIndex:
    """A parsed JSON manifest: ``{"version": ..., "ids": [...]}`` (today's form) or
    ``{"version": ..., "chunks": [{...}, ...]}``."""
    if not isinstance(data, dict):
        raise InputError('expected {"version": ..., "ids": [...]} or {"version": ..., "chunks": [...]}',
                         source, "(top level)")
    v = data.get("version", version)
    if v is not None and not isinstance(v, str):
        raise InputError("must be a string", source, "version")
    if "chunks" in data and "ids" in data:
        raise InputError('give "chunks" or "ids", not both', source, "ids")
    key = "chunks" if "chunks" in data else "ids"
    items = data.get(key)
    if key == "ids" and isinstance(items, (tuple, set, frozenset)):  # from an index callable
        items = list(items)
    if not isinstance(items, list):
        what = "chunk entries" if key == "chunks" else "chunk ids"
        raise InputError(f'"{key}" must be a list of {what}', source, key)
    if key == "ids":
        bad = next((i for i, x in enumerate(items) if not isinstance(x, str)), None)
        if bad is not None:
            raise InputError("chunk ids must be strings", source, f"ids[{bad}]")
    return build_index(enumerate(items), v or version, source, where=f"{key}[{{}}]".format,
                       repeats_ok=key == "ids")
