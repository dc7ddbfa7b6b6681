"""A retrieval cache: a question already answered under the same retriever config and the
same index version is not asked again.

What a PR that changes only the gold set, the gate or the docs needs: the paid retriever is
called for new or reworded questions only. The key is sha256 over (question text, the
retriever's resolved config as the artefact records it, index version); anything else that
changes retrieval (the retriever's own code) must show in one of those, usually the index
version.

One SQLite file in the cache folder (``retrieval-cache.sqlite3``, standard library, WAL
journal), an entry a row keyed by that hash: a run reads one entry per question when it
needs it, never the whole store, and writes its answers in batches of one transaction each
(no fsync per answer), so a folder the CI caches between runs can be restored, grown and
saved, and shards on one machine can share it.

An entry is an answer the retriever gave, and it is held to what a live answer is held to:
it passes the same cleaning (core/results.clean: string ids, finite numeric scores, no
repeated id, best first, cut at the depth, ids outside the index named). An entry that
cannot be read or does not pass (another question's, a broken row, integer ids, a score
"high") is asked again, written again, and counted aloud at the end of the run. A failed
answer is never stored.

Entries expire ``MAX_AGE_DAYS`` after they were written (a clock more than a day ahead of
now counts as expired too): an expired entry is asked again, and the rows past their age are
deleted when a run opens the cache, so a store kept between runs does not grow without end.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ci_eval.core.results import DUPLICATES, ResultError, Retrieved, clean
from ci_eval.errors import InputError
from ci_eval.retrieval.query import Query

FILE_NAME = "retrieval-cache.sqlite3"
MAX_AGE_DAYS = 30
_DAY = 86_400.0
_TABLE = "entries_v2"  # a new layout of the row is a new table: old rows are never misread
_FLUSH_EVERY = 512  # answers written a transaction
_DUPLICATE_NOTE = f" {DUPLICATES} (first occurrence kept)"
_SCHEMA = (f"CREATE TABLE IF NOT EXISTS {_TABLE} (key TEXT PRIMARY KEY, question TEXT NOT NULL, "
           "written REAL NOT NULL, ids TEXT NOT NULL, scores TEXT NOT NULL, duplicates INTEGER NOT NULL) "
           "WITHOUT ROWID")


class Unusable(Exception):
    """An entry that is there but cannot be used: why, in a few words (``args[0]``, what
    entries are counted by), and an example of it (``args[1]``, optional)."""


def _open(path: Path, source: str) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # one connection, used by whichever thread draws the run's stream
        db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        # WAL: readers never wait for the writer; NORMAL: no fsync per transaction (a cache
        # may lose its last answers to a power cut, never its consistency).
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(_SCHEMA)
    except (sqlite3.Error, OSError) as exc:
        raise InputError(f"the retrieval cache {path} cannot be used ({exc}): delete it, or name "
                         "another folder", source) from None
    return db


class RetrievalCache:
    def __init__(self, folder: str, retriever: dict, index_version: str | None, source: str = "cache", *,
                 depth: int = 15, known_ids=None, now: Callable[[], float] = time.time,
                 say: Callable[[str], None] | None = None):
        if not index_version:
            # Without a version a re-indexed store would be answered from the old index.
            raise InputError("the retrieval cache needs an index version (a manifest with a "
                             "\"version\", or [index] version)", source)
        self.folder = Path(folder)
        self.path = self.folder / FILE_NAME
        self.index_version = index_version
        self.depth, self.known_ids, self._now = depth, known_ids, now
        self._say = say or (lambda line: print(line, file=sys.stderr))
        self._config = json.dumps(retriever, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        self.hits = self.misses = self.unreadable = 0
        self.why: dict[str, int] = {}  # reason -> how many entries could not be used for it
        self.example: str | None = None  # the first such entry's details
        self._pending: list[tuple] = []
        self._db = _open(self.path, source)
        self._db.execute(f"DELETE FROM {_TABLE} WHERE written < ? OR written > ?", self._fresh_window())

    def _fresh_window(self) -> tuple[float, float]:
        now = self._now()
        return now - MAX_AGE_DAYS * _DAY, now + _DAY

    def key(self, question: str) -> str:
        material = json.dumps([question, self._config, self.index_version], ensure_ascii=False)
        return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()

    def _entry(self, query: Query) -> Retrieved | None:
        """The cleaned cached answer; None when there is none (or it expired); Unusable
        when there is one that cannot be used."""
        try:
            row = self._db.execute(f"SELECT question, written, ids, scores, duplicates FROM {_TABLE} "
                                   "WHERE key = ?", (self.key(query.question),)).fetchone()
        except sqlite3.Error as exc:
            raise Unusable(f"unreadable ({exc})") from None
        if row is None:
            return None
        question, written, ids, scores, duplicates = row
        oldest, newest = self._fresh_window()
        if not (isinstance(written, float) and oldest <= written <= newest):
            return None
        if question != query.question:
            raise Unusable("written for another question")
        return _cleaned(ids, scores, duplicates, self.depth, self.known_ids)

    def get(self, query: Query) -> Retrieved | None:
        """The cached answer, cleaned as a live one; None to ask the retriever (counted
        as unreadable when an entry was there but could not be used)."""
        try:
            return self._entry(query)
        except Unusable as why:
            self.unreadable += 1
            self.why[why.args[0]] = self.why.get(why.args[0], 0) + 1
            if self.example is None and len(why.args) > 1:
                self.example = f"{query.id!r}: {why.args[1]}"[:200]
            return None

    def put(self, query: Query, result: Retrieved) -> None:
        if result.failed:
            return
        duplicates = next((int(w.split()[0]) for w in result.warnings if w.endswith(_DUPLICATE_NOTE)), 0)
        self._pending.append((self.key(query.question), query.question, float(self._now()),
                              json.dumps(list(result.ids), ensure_ascii=False), json.dumps(list(result.scores)),
                              duplicates))
        if len(self._pending) >= _FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        with self._db:  # one transaction
            self._db.execute("BEGIN")
            self._db.executemany(f"INSERT OR REPLACE INTO {_TABLE} VALUES (?, ?, ?, ?, ?, ?)", self._pending)
        self._pending.clear()

    def around(self, queries: Sequence[Query], run: Callable[[Sequence[Query]], Iterator]) -> Iterator:
        """The runner's stream for ``queries`` with cached answers put in place: ``run`` is
        called on the misses only (not at all when everything is cached); question order is
        kept. Each entry is read when it is looked at (once to decide, once to answer), so
        the run holds none of the store."""
        usable = bytearray(len(queries))
        for i, q in enumerate(queries):
            usable[i] = self.get(q) is not None
        misses = [q for q, hit in zip(queries, usable) if not hit]
        fresh = iter(run(misses)) if misses else iter(())
        try:
            for q, hit in zip(queries, usable):
                if hit:
                    self.hits += 1
                    yield q.id, self._again(q)
                    continue
                qid, result = next(fresh)
                self.misses += 1
                self.put(q, result)
                yield qid, result
        finally:
            self.close()

    def _again(self, query: Query) -> Retrieved:
        """The entry found usable a moment ago; an entry another run removed meanwhile is
        a failed answer, never a silent empty one."""
        try:
            entry = self._entry(query)
        except Unusable as why:
            entry, reason = None, why.args[0]
        else:
            reason = "removed by another run while this one read it"
        if entry is None:
            return Retrieved(error=f"the retrieval cache entry was {reason}")
        return entry

    def close(self) -> None:
        self.flush()
        if self.unreadable:
            reasons = "; ".join(f"{n} {why}" for why, n in sorted(self.why.items()))
            if self.example:
                reasons += f"; first: {self.example}"
            self._say(f"ci-eval: warning: retrieval cache {self.path}: {self.unreadable} entr"
                      f"{'y' if self.unreadable == 1 else 'ies'} could not be used and "
                      f"{'was' if self.unreadable == 1 else 'were'} asked again ({reasons})")
            self.unreadable = 0

    def record(self) -> dict:
        """The artefact's ``cache`` key: how many questions came from the cache."""
        return {"hits": self.hits, "misses": self.misses}


def _cleaned(ids_text, scores_text, duplicates, depth: int, known_ids) -> Retrieved:
    """A stored answer through the cleaning a live one gets (core/results.clean), its
    warning about repeated ids as the live answer had it."""
    try:
        ids, scores = json.loads(ids_text), json.loads(scores_text)
    except (TypeError, ValueError, RecursionError):
        raise Unusable("unreadable (not JSON)") from None
    if not (isinstance(ids, list) and isinstance(scores, list) and len(ids) == len(scores)):
        raise Unusable("of the wrong shape (ids and scores not two lists of one length)")
    if type(duplicates) is not int or not 0 <= duplicates < 10**9:
        raise Unusable("of the wrong shape (a count of repeated ids that is not one)")
    try:
        result = clean(list(zip(ids, scores)), depth, None, known_ids)
    except ResultError as exc:
        raise Unusable("refused by the cleaning a live answer gets", str(exc)) from None
    if duplicates and not any(w.endswith(_DUPLICATE_NOTE) for w in result.warnings):
        note = f"{duplicates}{_DUPLICATE_NOTE}"
        result = Retrieved(result.ids, result.scores, None, None, (note, *result.warnings), result.pairs)
    return result
