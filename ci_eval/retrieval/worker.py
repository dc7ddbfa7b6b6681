"""The python and framework retriever types, run in a worker process of their own.

The user's code in ci-eval's own interpreter could hold it: a catastrophic regex or
``sum(range(3*10**9))`` keeps the interpreter lock, so no thread of ci-eval's (the pool's
timeouts among them) runs until it returns, and a non-daemon thread it starts keeps the
process alive. So it runs in a child interpreter (retrieval/worker_serve.py) with the same
runner, pool and timeouts as before, and this process, whose lock the user's code cannot
take, watches it:

- the child sends a heartbeat from a thread; when it goes quiet for longer than the
  per-question ``timeout`` (plus ``GRACE``) once the target is built, the child is frozen:
  its process group is killed, the questions it was answering fail (``no answer within the
  2s timeout``) and a fresh child takes the questions left;
- ``total_timeout`` is kept by the clock here: at ``total_timeout + GRACE`` the child is
  killed whatever it is doing, the questions measured so far are kept and the rest are
  ``not finished`` or ``not run``;
- the child starts in a session of its own, with the environment minus the token and the
  action's inputs (github.env.without_secrets), so none of it reaches the user's code, and
  its whole group is killed when the run ends: nothing it started outlives the run.

What the child sends back is JSON, never a pickle (a pickle from the user's process could
run code here); each result is checked for its shape before it is used.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain

from ci_eval.core.artefact.results import STAGE_CAP, Retrieved, failed
from ci_eval.errors import InputError, RetrieverError
from ci_eval.retrieval.query import Query

# Seconds past a deadline before the child is killed: its own pool keeps the timeouts to
# the hundredth of a second when it can run; this process steps in only when it cannot.
GRACE = 2.0
# The types whose code runs in ci-eval's interpreter unless it runs here.
# The framework each type needs, checked here before a child is started, so that a missing
# one is bad input at retriever.type (exit 2) as the runner itself would say.
_FRAMEWORKS = {"langchain": ("langchain_core", "langchain-core"),
               "llamaindex": ("llama_index.core", "llama-index-core"),
               "haystack": ("haystack", "haystack-ai")}
# The child imports ci_eval from where this process did (a workspace folder named ci_eval,
# first on the path, must not stand in for it), then takes this process's import path.
_BOOT = ("import json, os, sys; line = sys.stdin.buffer.readline(); line or os._exit(0); "
         "path, root = json.loads(line); sys.path.insert(0, root); "
         "from ci_eval.retrieval.worker_serve import serve; sys.path[:] = path; serve()")
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Child:
    """One worker process, its protocol lines read on a thread into ``lines``.

    Started in two steps: the process boots (an interpreter, ci-eval's modules) as soon as
    the config is known, and is given its questions by ``start`` once the gold set is read,
    so the boot is not on the run's path (``prestart``)."""

    def __init__(self, config):
        import tempfile

        from ci_eval.github.env import without_secrets
        from ci_eval.retrieval.process_marks import MARK, new_mark

        self.config = config
        self.mark = new_mark()  # found again in whatever it starts, in its group or not
        # When each call started and returned, written by the child, read here (see stuck);
        # sized and mapped by both sides once the questions are known.
        self._clock_file = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**without_secrets(os.environ), MARK: self.mark}, start_new_session=True, bufsize=0,
            pass_fds=(self._clock_file.fileno(),),
        )
        self._shared = self.clock = None
        try:
            self.proc.stdin.write(json.dumps([sys.path, _ROOT]).encode() + b"\n")
        except OSError:
            pass  # the child is gone already: its end of stdout says so once started

    def start(self, questions: list[tuple[str, str]], known_ids, from_the_start: bool) -> None:
        import mmap

        from ci_eval.retrieval.command_runner import MAX_LINE_BYTES, _lines

        size = 16 * max(len(questions), 1)
        with self._clock_file as clock_file:
            clock_file.truncate(size)
            self._shared = mmap.mmap(clock_file.fileno(), size)
            clock_fd = clock_file.fileno()
        self.clock = memoryview(self._shared).cast("d")
        self.lines: queue.SimpleQueue = queue.SimpleQueue()
        self.answered: set[int] = set()  # positions (in this child's questions) answered
        setup = {"retriever_config": self.config, "questions": questions, "known_ids": known_ids,
                 "clock_fd": clock_fd, "from_the_start": from_the_start}
        payload = pickle.dumps(setup, pickle.HIGHEST_PROTOCOL)
        threading.Thread(target=self._write, args=(payload,), daemon=True).start()

        def read() -> None:
            _lines(self.proc.stdout.fileno(), self.lines.put, MAX_LINE_BYTES)
            self.lines.put(None)

        threading.Thread(target=read, daemon=True).start()

    def _write(self, payload: bytes) -> None:
        try:
            self.proc.stdin.write(payload)
            self.proc.stdin.close()
        except OSError:
            pass  # the child is gone: its end of stdout says so

    def stuck(self, answered) -> set[int]:
        """The positions whose call holds the interpreter: of the calls started and not
        returned (and not already failed by the child's own timeout), the one started last;
        a call that takes the lock and never gives it back lets no other start after it."""
        clock = self.clock
        open_calls = {i: clock[2 * i] for i in range(len(clock) // 2)
                      if clock[2 * i] and not clock[2 * i + 1] and i not in answered}
        if not open_calls:
            return set()
        last = max(open_calls.values())
        return {i for i, t in open_calls.items() if t == last}

    def kill(self) -> None:
        from ci_eval.retrieval.process_marks import kill_marked

        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        kill_marked(self.mark)  # a child that left the group with setsid()

    def close(self) -> None:
        self._clock_file.close()
        if self._shared is not None:
            self.clock.release()
            self._shared.close()


# The child booted for the run in progress, not yet given its questions (prestart).
_spare: _Child | None = None


def prestart(config) -> None:
    """Boot the worker process of a python or framework retriever now, while the gold set
    is read: its interpreter and ci-eval's modules (about 0.15 s) are then off the run's
    path. No user code runs until it is given its questions; one not taken is ended by
    ``discard_spare`` (or, with ci-eval's process, by the end of its stdin)."""
    global _spare
    from ci_eval.retrieval.registry import IN_WORKER

    discard_spare()
    if config.retriever.type in IN_WORKER:
        _spare = _Child(config)


def discard_spare() -> None:
    global _spare
    child, _spare = _spare, None
    if child is not None:
        child.kill()
        child.close()


def _child_for(config) -> _Child:
    global _spare
    child, _spare = _spare, None
    if child is not None and child.config is config and child.proc.poll() is None:
        return child
    if child is not None:
        child.kill()
        child.close()
    return _Child(config)


def _finite_number(value) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _id_list(value) -> bool:
    return type(value) is list and len(value) <= STAGE_CAP and all(type(x) is str for x in value)


def _stages_and_calls(extra: list) -> tuple[tuple, tuple] | None:
    """A result's ``[stages, calls]`` as worker_serve sends them (``[[name, ids], ...]`` and
    ``[ids, ...]``), None when they are not that shape."""
    stages, calls = extra
    if not (type(stages) is list and type(calls) is list and all(_id_list(c) for c in calls)
            and all(type(s) is list and len(s) == 2 and type(s[0]) is str and _id_list(s[1]) for s in stages)):
        return None
    return tuple((name, tuple(ids)) for name, ids in stages), tuple(map(tuple, calls))


def _retrieved(item, depth: int, positions: int) -> tuple[int, Retrieved] | None:
    """One ``[i, ids, scores, latency_ms, error, warnings]`` of a result line (``stages`` and
    ``calls`` after them when it has any), or None when it is not the shape worker_serve sends."""
    if not isinstance(item, list) or len(item) not in (6, 8):
        return None
    staged = _stages_and_calls(item[6:]) if len(item) == 8 else ((), ())
    if staged is None:
        return None
    i, ids, scores, ms, error, warnings = item[:6]
    if not (type(i) is int and 0 <= i < positions and type(ids) is list and type(scores) is list
            and len(ids) == len(scores) <= depth and type(warnings) is list
            and (error is None or type(error) is str) and (ms is None or _finite_number(ms))):
        return None
    if not (all(type(x) is str for x in ids) and all(map(_finite_number, scores))
            and all(type(x) is str for x in warnings)):
        return None
    return i, Retrieved(tuple(ids), tuple(map(float, scores)), ms, error, tuple(warnings), None, *staged)


def _unpacked(p, depth: int, positions: int) -> list[tuple[int, Retrieved]]:
    """worker_serve.packed's batch as ``(position, Retrieved)``; [] when it is not that shape.

    Checked and cut in passes over the whole batch that stay in C, each Retrieved carrying
    its (id, score) pairs as clean() would give them (the rows take those rather than zip
    them again): the per-result loop this replaces made the parent the slower side of the
    pipe on an instant retriever (benchmarks/bench_worker.py; docs/benchmarks.md)."""
    import base64
    import binascii
    from array import array

    try:
        fields = [p[k] for k in ("i", "n", "ids", "s", "ms", "e", "w")]
    except (TypeError, KeyError):
        return []
    index, counts, joined, packed, ms, errors, warnings = fields
    if not (type(joined) is str and type(packed) is str and type(index) is list
            and all(type(f) is list and len(f) == len(index) for f in (counts, ms, errors, warnings))):
        return []
    scores = array("d")
    try:
        scores.frombytes(base64.b64decode(packed, validate=True))
    except (binascii.Error, ValueError):
        return []
    ids = joined.split("\0") if joined else []
    if not index or len(ids) != len(scores) or not all(map(math.isfinite, scores)):
        return []
    flat_warnings = list(chain.from_iterable(w for w in warnings if type(w) is list))
    if not (_types(index) <= _INT and 0 <= min(index) and max(index) < positions
            and _types(counts) <= _INT and 0 <= min(counts) and max(counts) <= depth and sum(counts) == len(ids)
            and _types(errors) <= _TEXT_OR_NONE and _types(warnings) <= _LIST and _types(flat_warnings) <= _TEXT
            and _types(ms) <= _NUMBER_OR_NONE and all(map(math.isfinite, (m for m in ms if m is not None)))):
        return []
    ends = list(accumulate(counts))
    cuts = list(map(slice, [0, *ends[:-1]], ends))
    ids, scores = tuple(ids), tuple(scores)
    pairs = tuple(zip(ids, scores))
    return list(zip(index, map(Retrieved, map(ids.__getitem__, cuts), map(scores.__getitem__, cuts), ms, errors,
                               map(tuple, warnings), map(pairs.__getitem__, cuts))))


def _types(values) -> set:
    return set(map(type, values))


_INT, _LIST, _TEXT = {int}, {list}, {str}
_TEXT_OR_NONE, _NUMBER_OR_NONE = {str, type(None)}, {int, float, type(None)}


class _Watch:
    """Where the questions of one run stand, across the children that answer them."""

    def __init__(self, queries: Sequence[Query], timeout: float, total_timeout: float | None):
        self.queries = list(queries)
        self.results: dict[int, Retrieved] = {}
        self.next_to_yield = 0
        self.timeout, self.total_timeout = timeout, total_timeout
        self.deadline = time.monotonic() + total_timeout + GRACE if total_timeout else None

    def left(self) -> list[int]:
        return [i for i in range(self.next_to_yield, len(self.queries)) if i not in self.results]

    def ready(self) -> Iterator[tuple[str, Retrieved]]:
        while self.next_to_yield in self.results:
            yield self.queries[self.next_to_yield].id, self.results.pop(self.next_to_yield)
            self.next_to_yield += 1

    def fail_left(self, running: set[int], running_says: str, rest_says: str) -> None:
        for i in self.left():
            self.results[i] = failed(running_says if i in running else rest_says)


def _serve_one(child: _Child, w: _Watch, order: list[int], depth: int):
    """Read ``child`` until it ends or must be stopped, yielding what is ready as it comes;
    return why it stopped: "end", "gone", "frozen" (quiet past the timeout once the target
    is built) or "deadline" (the total timeout)."""
    built, last = False, time.monotonic()
    while True:
        now = time.monotonic()
        if w.deadline is not None and now >= w.deadline:
            return "deadline"
        if built and now - last > w.timeout + GRACE:
            return "frozen"
        try:
            line = child.lines.get(timeout=0.1)
        except queue.Empty:
            continue
        if line is None:
            return "gone"
        last = time.monotonic()
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError, TypeError):
            continue  # not ours: the protocol descriptor is the child's alone
        if not isinstance(msg, dict) or "hb" in msg:
            continue
        if msg.get("ready") is True:
            built = True
        elif "p" in msg or "r" in msg:
            if "p" in msg:
                batch = _unpacked(msg["p"], depth, len(order))
            else:
                batch = filter(None, (_retrieved(item, depth, len(order))
                                      for item in (msg["r"] if type(msg["r"]) is list else ())))
            for i, result in batch:
                child.answered.add(i)
                w.results.setdefault(order[i], result)
            yield from w.ready()
        elif "fatal" in msg:
            _raise(msg)
        elif msg.get("end") is True:
            return "end"


def _raise(msg: dict):
    def text(key):
        value = msg.get(key)
        return value if isinstance(value, str) else None

    message = text("message") or "the retriever's process failed"
    if msg.get("fatal") == "input":
        raise InputError(message, text("source"), text("place"))
    raise RetrieverError(message)


def run_in_worker(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    """Every question through the configured python or framework retriever, in a child
    process watched from here (the module docstring); ``(id, Retrieved)`` in question order."""
    r = config.retriever
    w = _Watch(queries, r.timeout, r.total_timeout)
    known = frozenset(known_ids) if known_ids is not None else None
    while w.left():
        order = w.left()
        child = _child_for(config)
        try:
            child.start([(w.queries[i].id, w.queries[i].question) for i in order], known,
                        from_the_start=not w.results and w.next_to_yield == 0)
            why = yield from _serve_one(child, w, order, r.depth)
        finally:
            child.kill()
        running = {order[i] for i in child.stuck(child.answered)}
        child.close()
        if why == "deadline":
            says = f"the total timeout of {r.total_timeout:g}s passed"
            w.fail_left(running, f"not finished: {says}", f"not run: {says}")
        elif why == "frozen":
            # The call that held the interpreter fails; the rest go to a fresh child.
            says = (f"no answer within the {r.timeout:g}s timeout (the retriever held the interpreter, "
                    "so its process was restarted)")
            for i in running or set(w.left()[:1]):
                w.results[i] = failed(says, r.timeout * 1000)
        elif why == "gone":
            code = child.proc.returncode
            w.fail_left(running, f"the retriever's process ended (exit code {code}) while answering",
                        f"not run: the retriever's process ended (exit code {code})")
        else:
            w.fail_left(set(), "", "not run: the retriever's process sent no result for it")
        yield from w.ready()


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    framework = _FRAMEWORKS.get(config.retriever.type)
    if framework is not None:
        from ci_eval.retrieval.framework import require_installed

        require_installed(*framework, config)
    if not queries:
        return iter(())
    return run_in_worker(config, queries, known_ids)
