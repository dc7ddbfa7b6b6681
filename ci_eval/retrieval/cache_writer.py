"""The retrieval cache's writer: a process of its own that takes batches of entries on its
standard input and inserts them into the store (retrieval/cache.py hands them over).

Why a process and not a thread of the run's: SQLite lets go of the interpreter lock while
it inserts, but a thread must take the lock back to bind every statement's values, and the
run's own thread holds it almost all the time, so the two took turns rather than running
side by side. Measured with an instant retriever at 100,000 questions, alternated: a first
cached run took 1.38 to 1.41x the wall time of an uncached one with a writer thread (014dc10),
1.16 to 1.20x with this process (``python benchmarks/bench_cache.py --scale 100000 --repeat 5``
and the same runs against 014dc10, load 1 to 2 on two cores).

The wire: frames, each an 8-byte little-endian length and that many bytes. The first is the
key's prefix (the retriever's config and the index version, ``keyed``); each one after it a
batch, a pickle of a list of (question, ids, scores, duplicates), ids and scores encoded by
the run with ``ids_json`` and ``score_bytes`` (sending the retriever's tuples to encode them
here cost more to pickle than encoding them); this process adds each answer's key and the
time it was written. End of input ends the work. Only the run that started this process
writes to it. Before it exits
the process writes one line on its standard output: empty when every entry was written,
else why writing stopped. It reads a batch while it inserts the one before, so the run is
held up by a write to the pipe only when the writer is ``_AHEAD`` batches behind.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import queue
import re
import sqlite3
import struct
import sys
import threading
import time
from itertools import chain

TABLE = "entries_v2"  # a new layout of the row is a new table: old rows are never misread
# Answers a transaction holds (or what came within _COMMIT_SECONDS; another run writing to
# the same store waits no longer than that). Keys are hashes, so every transaction touches
# pages all over the table and the journal holds each of them again: at 2,048 a transaction
# a first run of 100,000 questions wrote a 457 MB journal for a 32 MB store (and copied it
# back at the end); at 65,536 it is two transactions.
_COMMIT_EVERY, _COMMIT_SECONDS = 65_536, 5.0
# Rows an INSERT statement holds (6 values each, under SQLite's oldest limit of 999
# parameters): binding a statement is one call instead of one a row.
ROWS = 128
_INSERT = f"INSERT OR REPLACE INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?)"
_INSERT_ROWS = f"INSERT OR REPLACE INTO {TABLE} VALUES " + ",".join(["(?, ?, ?, ?, ?, ?)"] * ROWS)
_AHEAD = 4  # batches read and not yet written (each about 5 MB)
LENGTH = struct.Struct("<Q")


def wire(batch: list) -> bytes:
    """A batch as the run sends it. The pickler's fast mode keeps no memo of the objects it
    has written: a batch holds no object twice that matters, and the memo was seven eighths
    of the time (a batch of 16,384 rows: 5 against 40 ms on the run's thread)."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    pickler.dump(batch)
    return out.getvalue()


_IDS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# What JSON must escape in a string; ids without any are written by joining them.
_ESCAPED = re.compile(r'["\\\x00-\x1f]')
_PACKS: dict = {}  # length -> struct packing that many doubles


def ids_json(ids) -> str:
    """``ids`` as a JSON list, the same text json.dumps gives: joined directly when no id
    holds a character JSON escapes (the common case; the encoder was most of what writing
    an entry cost), else through the encoder."""
    if ids and _ESCAPED.search("".join(ids)) is None:
        return '["' + '","'.join(ids) + '"]'
    return _IDS(list(ids))


def score_bytes(scores) -> bytes:
    """The doubles, little-endian (exact, and read back without parsing a number): one
    cached struct a length, a third of what an array costs to build from the tuple."""
    pack = _PACKS.get(len(scores))
    if pack is None:
        pack = _PACKS[len(scores)] = struct.Struct(f"<{len(scores)}d").pack
    return pack(*scores)


def keyed(prefix: bytes):
    """The key of a question under ``prefix``: sha256 over the prefix, then the question."""
    start = hashlib.sha256(prefix)

    def key(question: str) -> bytes:
        digest = start.copy()
        digest.update(question.encode("utf-8", "surrogatepass"))
        return digest.digest()

    return key


def rows(key, batch: list) -> list[tuple]:
    """A batch of (question, ids, scores, duplicates) as the table's rows, in key order (the
    inserts then walk the table's pages in order: half the time of question order, whose
    keys are scattered)."""
    written = time.time()
    return sorted((key(question), question, written, ids, scores, duplicates)
                  for question, ids, scores, duplicates in batch)


def insert(db: sqlite3.Connection, batch: list) -> None:
    whole = len(batch) - len(batch) % ROWS
    db.executemany(_INSERT_ROWS, (tuple(chain.from_iterable(batch[start:start + ROWS]))
                                  for start in range(0, whole, ROWS)))
    if whole < len(batch):
        db.executemany(_INSERT, batch[whole:])


def _read_exactly(stream, size: int) -> bytes | None:
    data = stream.read(size)
    return data if data is not None and len(data) == size else None


def _frames(stream):
    """Each whole frame on ``stream``; a frame cut off (the run stopped mid-way) ends them."""
    while (head := _read_exactly(stream, LENGTH.size)) is not None:
        body = _read_exactly(stream, LENGTH.unpack(head)[0])
        if body is None:
            return
        yield body


def _batches(stream, into: queue.Queue) -> None:
    """The key's prefix, then each batch on ``stream`` as rows, put on ``into``, then None
    (what came whole is still written)."""
    try:
        frames = _frames(stream)
        prefix = next(frames, None)
        if prefix is not None:
            key = keyed(prefix)
            for body in frames:
                into.put(rows(key, pickle.loads(body)))
    except Exception as exc:  # a batch that cannot be read: said by write_all, never dropped silently
        into.put(exc)
    finally:
        into.put(None)


def write_all(path: str, batches: queue.Queue) -> str:
    """Insert every batch from ``batches`` until None; why writing stopped ('' if it did
    not). A batch that fails is rolled back and the rest are drained unwritten."""
    db, error, open_since, in_transaction = None, "", 0.0, 0
    while (batch := batches.get()) is not None:
        if error:
            continue  # drained, so the run never waits on a writer that gave up
        if isinstance(batch, Exception):
            error = f"a batch could not be read ({type(batch).__name__}: {batch})"
            continue
        try:
            if db is None:
                db = sqlite3.connect(path, timeout=60, isolation_level=None)
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA wal_autocheckpoint=0")
            if not in_transaction:
                db.execute("BEGIN")
                open_since = time.monotonic()
            insert(db, batch)
            in_transaction += len(batch)
            if in_transaction >= _COMMIT_EVERY or time.monotonic() - open_since >= _COMMIT_SECONDS:
                db.execute("COMMIT")
                in_transaction = 0
        except sqlite3.Error as exc:
            error, in_transaction = str(exc) or type(exc).__name__, 0
            if db is not None and db.in_transaction:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the error already said why; nothing more is written
    if db is not None:
        try:
            if in_transaction and not error:
                db.execute("COMMIT")
            # one checkpoint at the end, which leaves a single file for the CI to save
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            error = error or str(exc) or type(exc).__name__
        db.close()
    return error


def main(path: str) -> None:
    batches: queue.Queue = queue.Queue(maxsize=_AHEAD)
    threading.Thread(target=_batches, args=(sys.stdin.buffer, batches), daemon=True).start()
    error = write_all(path, batches)
    sys.stdout.write(error.replace("\n", " ") + "\n")
    sys.stdout.flush()
