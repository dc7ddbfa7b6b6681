"""The gold set on disk while people label it: every decision re-reads the file under a
lock, applies itself to what is there now, checks the result is still a valid gold set and
replaces the file atomically. Two pages (or two `ci-eval label` processes) on the same file
therefore add to each other's work; a killed server loses at most the decision in flight."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

from ci_eval.core.gold.goldformat import dumps_gold_set, gold_text
from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.errors import InputError
from ci_eval.inputs.files import atomic_write, read_json

try:  # POSIX; elsewhere the in-process lock still serialises one server's pages
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None


class GoldStore:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        # The lock is taken in the folder that really holds the file: through a symlink the
        # write lands beside the target, and a second process given the real path (or another
        # link) must wait on the same lock.
        self._lock_folder = Path(os.path.realpath(self.path)).parent
        self._lock = threading.Lock()
        # (signature, document, the file's text when it is laid out otherwise than ci-eval
        # writes, else None): see read and _text
        self._cached: tuple | None = None

    @contextlib.contextmanager
    def _locked(self):
        """The folder is locked rather than a lock file beside the gold set: nothing new
        appears in the user's tree, and the lock survives the rename that replaces the file."""
        with self._lock:
            if fcntl is None:
                yield
                return
            fd = os.open(self._lock_folder, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing releases the lock

    def _signature(self):
        """The file as the filesystem knows it: a rename over it (any writer's) or an edit
        in place changes the inode, size or modification time."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns

    def read(self) -> dict:
        """The gold set, checked. The document last read or written here is kept with the
        file's signature and given again while the file is unchanged, so a decision does not
        parse and check a large gold set twice. Nothing changes a document in place (the
        judgement functions return new ones), so sharing it is safe."""
        before = self._signature()
        cached = self._cached
        if cached is not None and before is not None and cached[0] == before:
            return cached[1]
        data, raw = read_json(self.path, "gold set")
        parse_gold_set(data, str(self.path))
        if before is not None and self._signature() == before:
            text = raw.decode("utf-8")
            # Once a disk read, not once a key: a file in ci-eval's own layout is written in it
            # straight away; only a file laid out otherwise pays for keeping its layout.
            self._cached = (before, data, None if dumps_gold_set(data) == text else text)
        return data

    def _text(self, new: dict) -> str:
        """What to write for ``new``: the one gold-set writer's text (core/gold/goldformat.gold_text),
        which keeps the layout of a file laid out otherwise and changes only the lines that
        carry the change."""
        if self._cached is None or self._cached[2] is None:
            return dumps_gold_set(new)
        _, old, foreign = self._cached
        return gold_text(new, foreign, old)

    def create(self, doc: dict) -> None:
        """Start a gold set that does not exist yet (never replaces one that does)."""
        with self._locked():
            if self.path.exists():
                return
            parse_gold_set(doc, str(self.path))
            atomic_write(self.path, dumps_gold_set(doc))

    def update(self, change: Callable[[dict], dict]) -> dict:
        with self._locked():
            old = self.read()
            new = change(old)
            self._check(old, new)
            text = self._text(new)
            atomic_write(self.path, text)
            foreign = self._cached is not None and self._cached[2] is not None
            self._cached = (self._signature(), new, text if foreign else None)
            return new

    def _check(self, old: dict, new: dict) -> None:
        """``parse_gold_set`` of ``new``, checking only the questions the change made: those
        it shares with ``old`` (checked when read) are the very same objects. Ids must stay
        unique across them all, and anchors are checked against the whole set, so either
        sends the whole document to the full check, as does any problem found (the full
        check words every problem with its place)."""
        probe = _changed_part(old, new)
        if probe is not None:
            try:
                parse_gold_set(probe, str(self.path))
                return
            except InputError:
                pass
        parse_gold_set(new, str(self.path))


def _changed_part(old: dict, new: dict) -> dict | None:
    """``new`` with only its new question objects, or None when that would not decide."""
    if not isinstance(new, dict) or "anchors" in new:
        return None
    prov = new.get("provenance", {})
    questions, pending = new.get("questions"), prov.get("pending", []) if isinstance(prov, dict) else None
    if not isinstance(questions, list) or not isinstance(pending, list):
        return None
    every = questions + pending
    ids = [q.get("id") for q in every if isinstance(q, dict)]
    if len(ids) != len(every) or len(set(ids)) != len(ids):
        return None
    shared = {id(q) for q in old.get("questions", [])} | {id(q) for q in old.get("provenance", {}).get("pending", [])}
    probe = {**new, "questions": [q for q in questions if id(q) not in shared]}
    if "pending" in prov:
        probe["provenance"] = {**prov, "pending": [q for q in pending if id(q) not in shared]}
    return probe
