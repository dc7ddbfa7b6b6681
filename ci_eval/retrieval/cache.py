"""A retrieval cache: a question already answered under the same retriever config and the
same index version is not asked again.

What a PR that changes only the gold set, the gate or the docs needs: the paid retriever is
called for new or reworded questions only. The key is sha256 over (question text, the
retriever's resolved config as the artefact records it with a fingerprint of the
retriever's own code (retrieval/code_print.py: the target module's files, the command's
script, the framework's installed version), index version); anything else that changes
retrieval (a model the code downloads, a service it calls) must show in one of those,
usually the index version. When questions asked before under the same settings are asked
again because the code or the index changed, the run says so in one line.

One SQLite file in the cache folder (``retrieval-cache.sqlite3``, standard library, WAL
journal), an entry a row keyed by that hash: a run reads one entry per question when it
needs it, never the whole store, and its answers are written by a process of its own
(retrieval/cache_writer.py), a few large transactions a run (no fsync per answer), so a
folder the CI caches between runs can be restored, grown and saved, and shards on one
machine can share it.

An entry is an answer the retriever gave, and it is held to what a live answer is held to:
it passes the same cleaning (core/artefact/results.clean: string ids, finite numeric scores, no
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
import os
import sqlite3
import subprocess
import sys
import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from ci_eval.core.artefact.results import DUPLICATES, ResultError, Retrieved, clean, clean_batch
from ci_eval.errors import InputError
from ci_eval.retrieval.cache_writer import LENGTH, TABLE, ids_json, keyed, score_bytes, wire
from ci_eval.retrieval.query import Query

FILE_NAME = "retrieval-cache.sqlite3"
MAX_AGE_DAYS = 30
_DAY = 86_400.0
_TABLE = TABLE  # named where the writer writes it
_FLUSH_EVERY = 16_384  # answers handed to the writer at a time (sorted by key: the larger, the closer
# together their pages; 16,384 entries are about 5 MB; 4,096 cost more CPU than the shorter
# wait for the last batch saved)
_LOOKUP = 256  # entries read a query (``key IN (...)``): fewer round trips, memory bounded
_DUPLICATE_NOTE = f" {DUPLICATES} (first occurrence kept)"
# ``ids``: a JSON list; ``scores``: the doubles themselves, little-endian (exact, and read
# back without parsing a number); ``duplicates``: how many repeated ids the live answer had
_SCHEMA = (f"CREATE TABLE IF NOT EXISTS {_TABLE} (key BLOB PRIMARY KEY, question TEXT NOT NULL, "
           "written REAL NOT NULL, ids TEXT NOT NULL, scores BLOB NOT NULL, duplicates INTEGER NOT NULL) "
           "WITHOUT ROWID")
_SWAP = sys.byteorder != "little"
# The code and index each retriever setting last asked with, so a run can say why it asked
# again (RetrievalCache.why_asked): one small row per setting, never read for answers.
_SEEN = "seen"
_SEEN_SCHEMA = f"CREATE TABLE IF NOT EXISTS {_SEEN} (settings TEXT PRIMARY KEY, seen TEXT NOT NULL, written REAL NOT NULL)"


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
        # no checkpoint (and its fsync) while the run writes: one at the end, which also
        # leaves a single file for the CI to save
        db.execute("PRAGMA wal_autocheckpoint=0")
        db.execute(_SCHEMA)
    except (sqlite3.Error, OSError) as exc:
        raise InputError(f"the retrieval cache {path} cannot be used ({exc}): delete it, or name "
                         "another folder", source) from None
    return db


class RetrievalCache:
    def __init__(self, folder: str, retriever: dict, index_version: str | None, source: str = "cache", *,
                 depth: int = 15, known_ids=None, say: Callable[[str], None] | None = None,
                 code: dict | None = None):
        if not index_version:
            # Without a version a re-indexed store would be answered from the old index.
            raise InputError("the retrieval cache needs an index version (a manifest with a "
                             "\"version\", or [index] version)", source)
        self.folder = Path(folder)
        self.path = self.folder / FILE_NAME
        self.index_version = index_version
        self.depth, self.known_ids = depth, known_ids
        self._say = say or (lambda line: print(line, file=sys.stderr))
        settings = json.dumps(retriever, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        # the retriever's own code is part of the key (retrieval/code_print.py): an edited
        # retriever under the same config is another retriever
        self.code = code or {}
        config = settings if code is None else json.dumps(
            {**retriever, "code": self.code}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        self._settings = hashlib.sha256(settings.encode("utf-8", "surrogatepass")).hexdigest()
        # the question comes last, after two fixed parts that end in a NUL: one key per question
        self._prefix = f"{config}\0{index_version}\0".encode("utf-8", "surrogatepass")
        self.key = keyed(self._prefix)  # the writer keys what it writes by the same function
        self.hits = self.misses = self.unreadable = 0
        self.why: dict[str, int] = {}  # reason -> how many entries could not be used for it
        self.example: str | None = None  # the first such entry's details
        self._pending: list[tuple] = []
        self.source, self._writer = source, None
        self._db = _open(self.path, source)
        self._db.execute(f"DELETE FROM {_TABLE} WHERE written < ? OR written > ?", self._fresh_window())
        self._before = self._last_seen()

    def _last_seen(self) -> dict | None:
        """What the code and the index were when these settings last asked (None: never)."""
        try:
            self._db.execute(_SEEN_SCHEMA)
            row = self._db.execute(f"SELECT seen FROM {_SEEN} WHERE settings = ?", (self._settings,)).fetchone()
            seen = json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError, TypeError, RecursionError):
            return None
        return seen if isinstance(seen, dict) else None

    def _note_seen(self) -> None:
        seen = json.dumps({**self.code, "index": self.index_version}, sort_keys=True)
        try:
            self._db.execute(f"INSERT OR REPLACE INTO {_SEEN} (settings, seen, written) VALUES (?, ?, ?)",
                             (self._settings, seen, time.time()))
        except sqlite3.Error:
            pass  # only the next run's reason is lost

    def why_asked(self) -> str | None:
        """Why questions asked before under these settings were asked again, in a few words:
        the retriever's code or the index changed since its answers were cached."""
        from ci_eval.retrieval.code_print import what_changed

        before = self._before
        if not before or not self.misses:
            return None
        reasons = []
        changed = what_changed(before, self.code)
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            reasons.append(f"the retriever's code changed since its answers were cached ({shown})")
        if before.get("index") != self.index_version:
            reasons.append(f"the index changed ({before.get('index')!r} -> {self.index_version!r})")
        return "; ".join(reasons) or None

    @staticmethod
    def _fresh_window() -> tuple[float, float]:
        now = time.time()
        return now - MAX_AGE_DAYS * _DAY, now + _DAY

    def _rows(self, keys: list[bytes]) -> dict:
        """key -> (question, written, ids, scores, duplicates) of the entries among ``keys``."""
        marks = ",".join("?" * len(keys))
        try:
            found = self._db.execute(f"SELECT key, question, written, ids, scores, duplicates FROM {_TABLE} "
                                     f"WHERE key IN ({marks})", keys).fetchall()
        except sqlite3.Error as exc:
            raise InputError(f"the retrieval cache {self.path} cannot be read ({exc}): delete it, or name "
                             "another folder", self.source) from None
        return {row[0]: row[1:] for row in found}

    def _answers(self, queries: Sequence[Query], keys: list[bytes], window) -> list:
        """Each query's cached answer, cleaned as a live one: a Retrieved, None (no entry, or
        an expired one) or Unusable (one that is there but cannot be used). The common
        batch is cleaned at once (core/artefact/results.clean_batch), any other entry by itself."""
        rows = self._rows(keys)
        out: list = [None] * len(queries)
        shaped, where = [], []
        for j, (query, key) in enumerate(zip(queries, keys)):
            row = rows.get(key)
            if row is None:
                continue
            question, written, ids, scores, duplicates = row
            if not (isinstance(written, float) and window[0] <= written <= window[1]):
                continue
            try:
                if question != query.question:
                    raise Unusable("written for another question")
                shaped.append(_shaped(ids, scores, duplicates))
                where.append(j)
            except Unusable as why:
                out[j] = why
        together = clean_batch([pairs for pairs, _, _ in shaped], self.depth, [None] * len(shaped),
                               self.known_ids)
        for n, (j, (pairs, duplicates, extra)) in enumerate(zip(where, shaped)):
            try:
                result = together[n] if together is not None else _clean_one(pairs, self.depth, self.known_ids)
            except Unusable as why:
                out[j] = why
                continue
            result = _with_duplicates(result, duplicates)
            out[j] = result if extra is None else replace(result, stages=extra[0], calls=extra[1])
        return out

    def _count(self, query: Query, why: Unusable) -> None:
        self.unreadable += 1
        self.why[why.args[0]] = self.why.get(why.args[0], 0) + 1
        if self.example is None and len(why.args) > 1:
            self.example = f"{query.id!r}: {why.args[1]}"[:200]

    def put(self, query: Query, result: Retrieved) -> None:
        if result.failed:
            return
        duplicates = 0
        if result.warnings:
            duplicates = next((int(w.split()[0]) for w in result.warnings if w.endswith(_DUPLICATE_NOTE)), 0)
        # an answer with stages or calls keeps them in its ids' text ({"ids", "stages",
        # "calls"}), so a cached run's stage records cover every question as a live run's do
        ids = ids_json(result.ids) if not (result.stages or result.calls) else json.dumps(
            {"ids": list(result.ids), "stages": [[name, list(got)] for name, got in result.stages],
             "calls": [list(got) for got in result.calls]}, ensure_ascii=False, separators=(",", ":"))
        # the writer adds the key and the time (cache_writer.rows), off the run's thread
        self._pending.append((query.question, ids, score_bytes(result.scores), duplicates))
        if len(self._pending) >= _FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Hand the answers gathered so far to the writer (one transaction)."""
        if self._pending:
            if self._writer is None:
                self._writer = _Writer(self.path, self._prefix)
            self._writer.send(self._pending)
            self._pending = []

    def _present(self, keys: list[bytes], window) -> set[bytes]:
        """The keys among ``keys`` with an entry still in its age: the entries themselves are
        not read (that is done once, when the question is answered)."""
        marks = ",".join("?" * len(keys))
        try:
            found = self._db.execute(f"SELECT key, written FROM {_TABLE} WHERE key IN ({marks})", keys).fetchall()
        except sqlite3.Error as exc:
            raise InputError(f"the retrieval cache {self.path} cannot be read ({exc}): delete it, or name "
                             "another folder", self.source) from None
        return {key for key, written in found if isinstance(written, float) and window[0] <= written <= window[1]}

    def around(self, queries: Sequence[Query], run: Callable[[Sequence[Query]], Iterator]) -> Iterator:
        """The runner's stream for ``queries`` with cached answers put in place: ``run`` is
        called on the misses (not at all when everything is cached); question order is kept.

        A first pass asks the store which questions have an entry in its age (keys only);
        each entry is then read and cleaned once, ``_LOOKUP`` at a time, when its question's
        turn comes. One that cannot be used then (unreadable, refused by the cleaning, or
        removed by another run meanwhile) is asked of the retriever with the others of its
        ``_LOOKUP`` that could not, in one more ``run`` call. The run holds none of the store:
        only each question's key (32 bytes) and whether it has an entry."""
        window = self._fresh_window()
        present = bytearray(len(queries))
        empty = self._db.execute(f"SELECT 1 FROM {_TABLE} LIMIT 1").fetchone() is None
        # keys to look up: none in an empty store (a first run), where only the writer keys
        keys = [] if empty else [self.key(q.question) for q in queries]
        for start in range(0, len(queries) if not empty else 0, _LOOKUP):
            found = self._present(keys[start:start + _LOOKUP], window)
            for j, key in enumerate(keys[start:start + _LOOKUP], start):
                present[j] = key in found
        misses = [q for q, hit in zip(queries, present) if not hit]
        if misses and self._writer is None:
            self._writer = _Writer(self.path, self._prefix)  # it boots while the first answers come
        fresh = iter(run(misses)) if misses else iter(())
        try:
            for start in range(0, len(queries), _LOOKUP):
                end = min(start + _LOOKUP, len(queries))
                hits = [i for i in range(start, end) if present[i]]
                answers = dict(zip(hits, self._answers([queries[i] for i in hits], [keys[i] for i in hits], window)
                                   if hits else ()))
                late = {i for i in hits if not isinstance(answers[i], Retrieved)}
                for i in late:
                    if isinstance(answers[i], Unusable):
                        self._count(queries[i], answers[i])
                if late:
                    asked = sorted(late)
                    answers.update(zip(asked, (result for _, result in run([queries[i] for i in asked]))))
                for i in range(start, end):
                    q = queries[i]
                    if present[i] and i not in late:
                        self.hits += 1
                        yield q.id, answers[i]
                        continue
                    qid, result = (q.id, answers[i]) if i in late else next(fresh)
                    self.misses += 1
                    self.put(q, result)
                    yield qid, result
        finally:
            self.hand_over()

    def hand_over(self) -> None:
        """Send the answers still held and tell the writer there are no more: it ends (its
        last insert, the log folded back into the file) while the run writes its artefact's
        end, which ``close`` waits for. Measured: 0.19 s of the 0.34 s a first cached run at
        100,000 questions waited for its writer was then spent writing the artefact."""
        self.flush()
        if self._writer is not None:
            self._writer.end_input()

    def close(self) -> None:
        self.hand_over()
        why = self.why_asked()
        if why:
            self._say(f"ci-eval: retrieval cache: {self.misses} asked again: {why}")
        if self.misses:
            self._note_seen()
        if self._writer is not None:
            failed, self._writer = self._writer.finish(), None
            if failed:
                # The answers are measured all the same; the cache only misses them next time.
                self._say(f"ci-eval: warning: retrieval cache {self.path}: answers could not all be "
                          f"written ({failed}); they will be asked again next time")
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass  # another run still reads it: its own close checkpoints
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


# The writer runs as ``python -I -S -c _BOOT ROOT PATH``: isolated, so a file of the user's
# repository (the working folder) can shadow none of what it imports.
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from ci_eval.retrieval.cache_writer import main; main(sys.argv[2])")
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Writer:
    """Batches of answers written by a process of its own (retrieval/cache_writer.py says
    why not a thread), fed through a pipe: the run encodes a batch and goes on."""

    def __init__(self, path: Path, prefix: bytes):
        from ci_eval.github.env import without_secrets

        self.error: str | None = None
        try:
            self.proc: subprocess.Popen | None = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _BOOT, _ROOT, str(path)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=without_secrets(os.environ))
        except OSError as exc:
            self.proc, self.error = None, f"its writer could not start: {exc}"
        self._frame(prefix)

    def _frame(self, payload: bytes) -> None:
        if self.error is not None or self.proc is None or self.proc.stdin.closed:
            return
        try:
            self.proc.stdin.write(LENGTH.pack(len(payload)))
            self.proc.stdin.write(payload)
        except OSError:
            self.error = "its writer stopped"

    def send(self, batch: list) -> None:
        if self.error is None:
            self._frame(wire(batch))

    def end_input(self) -> None:
        """No more batches: the writer finishes on its own."""
        if self.proc is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass  # the writer is gone: its exit status says so

    def finish(self) -> str | None:
        """Wait for every batch to be written; why writing stopped, if it did."""
        if self.proc is None:
            return self.error
        self.end_input()
        said = self.proc.stdout.read().decode("utf-8", "replace").strip()
        self.proc.stdout.close()
        code = self.proc.wait()
        if code != 0:
            return self.error or f"its writer exited with status {code}"
        return said or self.error


def _staged(ids) -> tuple[list, tuple | None]:
    """The final list's ids and, for an answer cached with its stages or calls, (stages,
    calls) as a Retrieved holds them; Unusable when they are not that."""
    if isinstance(ids, list):
        return ids, None
    if not isinstance(ids, dict) or not isinstance(ids.get("ids"), list):
        raise Unusable("of the wrong shape (neither a list of ids nor an answer with stages)")

    def id_list(got) -> tuple:
        if not isinstance(got, list) or not all(isinstance(c, str) and c for c in got):
            raise Unusable("of the wrong shape (a stage or call that is not a list of ids)")
        return tuple(got)

    stages, calls = ids.get("stages", []), ids.get("calls", [])
    if not isinstance(stages, list) or not isinstance(calls, list):
        raise Unusable("of the wrong shape (stages or calls that are not lists)")
    named = []
    for item in stages:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            raise Unusable("of the wrong shape (a stage without its name)")
        named.append((item[0], id_list(item[1])))
    return ids["ids"], (tuple(named), tuple(id_list(c) for c in calls))


def _shaped(ids_text, scores_blob, duplicates) -> tuple[list, int, tuple | None]:
    """A stored answer as the (id, score) pairs a retriever would have returned, its count
    of repeated ids and its (stages, calls) when it had them; Unusable when it is not that."""
    try:
        ids = json.loads(ids_text)
    except (TypeError, ValueError, RecursionError):
        raise Unusable("unreadable (its ids are not JSON)") from None
    ids, extra = _staged(ids)
    if not isinstance(scores_blob, bytes) or len(scores_blob) % 8:
        raise Unusable("of the wrong shape (its scores are not doubles)")
    scores = array("d", scores_blob)
    if _SWAP:
        scores.byteswap()
    if not isinstance(ids, list) or len(ids) != len(scores):
        raise Unusable("of the wrong shape (not as many ids as scores)")
    if type(duplicates) is not int or not 0 <= duplicates < 10**9:
        raise Unusable("of the wrong shape (a count of repeated ids that is not one)")
    return list(zip(ids, scores.tolist())), duplicates, extra


def _clean_one(pairs: list, depth: int, known_ids) -> Retrieved:
    try:
        return clean(pairs, depth, None, known_ids)
    except ResultError as exc:
        raise Unusable("refused by the cleaning a live answer gets", str(exc)) from None


def _with_duplicates(result: Retrieved, duplicates: int) -> Retrieved:
    """The warning about repeated ids the live answer had (the stored one has none left)."""
    if duplicates and not any(w.endswith(_DUPLICATE_NOTE) for w in result.warnings):
        note = f"{duplicates}{_DUPLICATE_NOTE}"
        return Retrieved(result.ids, result.scores, None, None, (note, *result.warnings), result.pairs)
    return result
