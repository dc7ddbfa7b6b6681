"""A base and a head artefact read at once: the base in a forked child while this process
reads the head.

Reading the two files is most of what `compare` waits for (about 2.9 s each at 100,000
questions), one after the other on one core while the machine usually has two. So where
forking is safe, the base is read by a child process, which sends the typed ``Artefact``
back pickled through a pipe (or the ``InputError`` its read raised), while this process
reads the head. The parallel read only ever steps aside: a child that crashes, is killed,
stays silent too long, or sends something that does not unpickle, and any exception in it
other than an ``InputError``, make this process read the base itself, one file after the
other as before, so the verdict, the printed bytes and any bug's traceback are the serial
read's. The child is always reaped and the pipe closed.

It stays serial (the base first, then the head sharing its id strings) off Linux, with
another Python thread running (forking copies no thread, only their locks), with fewer than
two usable CPUs, when either path is not a regular file (a FIFO is read once), and when the
two files together exceed ``PAIR_BOUND``: each process holds its own artefact and the base
travels as a pickle, so a pair near the size limit must keep the serial read's memory.
"""

from __future__ import annotations

import os
import select
import stat
import sys
import threading
import time
import warnings

from ci_eval.core.artefact.artefact import Artefact
from ci_eval.errors import InputError
from ci_eval.inputs.artefact_file import read_run
from ci_eval.inputs.pickled import ARTEFACT, ERROR, artefact_frame, error_frame, unpickled

# Both files together, in bytes: at 100,000 questions (105 MB) the two processes peaked at
# 156 and 120 MB (the child's figure counts the pages it shares with its parent) against
# 137 MB read serially. The pair grows about linearly, so this keeps the two under 1 GB with
# room; it is above two files at the reader's 128 MiB cap, and a pair read with the cap lifted
# (the 1,000,000-question benchmark, about 1.1 GB) is read one file after the other.
PAIR_BOUND = 300 * 1024 * 1024
# How long the child may stay silent after the head is read, beyond this many times the
# head's own read, before it is taken to be stuck (a base of the head's size takes as long).
SILENT_SECONDS, SILENT_TIMES = 30.0, 4.0


def read_pair(base_path: str | None, head_path: str) -> tuple[Artefact | None, Artefact]:
    """The base and head artefacts at those paths, each read as ``read_run`` reads it, the
    base deep enough for the head's k (judged@k reads the base at it), their id maps
    dropped. A bad base is the error raised when both are bad, as when read in turn. No
    ``base_path``: no base (None), the head alone."""
    if base_path is None:
        head = read_run(head_path)
        head.columns.done_reading()
        return None, head
    if parallel_possible(base_path, head_path):
        base, head = _read_at_once(base_path, head_path)
    else:
        base, head = _one_after_other(base_path, head_path)
    if base.depth < head.header.k:  # a rare k change: read again, sharing the head's strings
        base = read_run(base_path, top=head.header.k, shared=head)
    base.columns.done_reading()
    head.columns.done_reading()
    return base, head


def _one_after_other(base_path: str, head_path: str) -> tuple[Artefact, Artefact]:
    base = read_run(base_path)
    return base, read_run(head_path, shared=base)  # one string per id both name


def parallel_possible(*paths: str) -> bool:
    """Whether the files at ``paths`` may be read by two processes at once (module doc)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    if threading.active_count() != 1 or len(os.sched_getaffinity(0)) < 2:
        return False
    try:
        found = [os.stat(path) for path in paths]
    except OSError:
        return False  # the serial read words it
    return (all(stat.S_ISREG(s.st_mode) for s in found)
            and sum(s.st_size for s in found) <= PAIR_BOUND)


def _read_at_once(base_path: str, head_path: str) -> tuple[Artefact, Artefact]:
    try:
        child = _BaseReader(base_path)
    except OSError:  # no process or pipe to be had
        return _one_after_other(base_path, head_path)
    head = head_error = None
    with child:
        started = time.monotonic()
        try:
            head = read_run(head_path)
        except Exception as exc:  # said after the base's own error, if it has one
            head_error = exc
        base = child.result(time.monotonic() - started, needed=head_error is None)
    if base is None and (head_error is None or child.stepped_aside):
        base = read_run(base_path)  # the child stepped aside: raises what the serial read raises
    if head_error is not None:
        raise head_error
    return base, head


class _BaseReader:
    """A forked child reading one artefact; ``result`` collects what it sent."""

    def __init__(self, path: str):
        readable, writable = os.pipe()
        try:
            with warnings.catch_warnings():
                # no Python thread runs (parallel_possible); numpy's BLAS pool parks at a fork
                warnings.simplefilter("ignore", DeprecationWarning)
                self.pid = os.fork()
        except OSError:
            os.close(readable)
            os.close(writable)
            raise
        if self.pid == 0:
            os.close(readable)
            _child(path, writable)  # never returns
        os.close(writable)
        self._pipe: int | None = readable
        self.stepped_aside = False

    def __enter__(self) -> _BaseReader:
        return self

    def __exit__(self, *exc_info) -> None:
        self._finish(kill=True)

    def result(self, head_seconds: float, needed: bool = True) -> Artefact | None:
        """The base artefact the child read, or None when it stepped aside (then
        ``stepped_aside``) or when not ``needed`` and it read the base well; raises the base's
        ``InputError``."""
        tag, payload = self._received(SILENT_SECONDS + SILENT_TIMES * head_seconds, needed)
        if tag == ARTEFACT and not needed:  # the base read well: the head's error is said
            self._finish(kill=True)
            return None
        if self._finish(kill=tag is None) != 0 or tag not in (ARTEFACT, ERROR):
            self.stepped_aside = True
            return None
        try:
            sent = unpickled(payload)
        except Exception:  # whatever does not unpickle is read again here
            self.stepped_aside = True
            return None
        if tag == ERROR:
            raise sent
        return sent

    def _received(self, timeout: float, needed: bool) -> tuple[bytes | None, bytes]:
        """The tag and the payload the child wrote, or (None, b"") when it stayed silent."""
        if not select.select([self._pipe], [], [], timeout)[0]:
            return None, b""
        tag = os.read(self._pipe, 1)
        if tag == ARTEFACT and not needed:
            return tag, b""  # not read: the base is not unpickled
        chunks = []
        while chunk := os.read(self._pipe, 1 << 20):
            chunks.append(chunk)
        return tag or None, b"".join(chunks)

    def _finish(self, kill: bool) -> int | None:
        """Close the pipe and reap the child (killed first if ``kill``); its exit status,
        None once finished."""
        if self._pipe is None:
            return None
        os.close(self._pipe)  # a child still writing meets a broken pipe and exits
        self._pipe = None
        if kill:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def _child(path: str, pipe: int) -> None:
    """The child: read the artefact, send it (or its InputError) and exit without running
    anything of the parent's (no atexit, no buffered output flushed)."""
    code = 1
    try:
        try:
            artefact = read_run(path)
            artefact.columns.done_reading()  # the id map is not sent
            payload = artefact_frame(artefact)
        except InputError as exc:
            payload = error_frame(exc)
        with os.fdopen(pipe, "wb") as out:
            out.write(payload)
        code = 0
    finally:
        os._exit(code)
