"""The child side of retrieval/worker.py: the python and framework retriever types run here,
in a process of their own, exactly as they would in ci-eval's (the same runner, pool,
timeouts and messages), and their results go back as JSON lines.

Started by worker.py as ``python -c BOOT``: the first line on stdin is the parent's import
path (JSON), the rest a pickle of the setup (the config, the questions, the index's ids),
sent once the gold set is read (the process boots meanwhile: worker.prestart).
On the protocol descriptor (stdout at start; the user's prints go to stderr), one JSON
object a line:

- ``{"hb": true}`` every HEARTBEAT seconds, written by a thread, so it stops when the user's
  code holds the interpreter lock; when each call started and returned is written meanwhile
  into a file both processes map (``clock_fd``: two doubles a question, time.monotonic);
- ``{"ready": true}`` once the target is imported and built;
- ``{"p": {...}}`` (or ``{"r": [...]}``) a batch of results, in question order (``packed``);
- ``{"fatal": "input" | "retriever", "message", "source", "place"}`` the run cannot go on
  (what the runner raised, said in the parent with the same class);
- ``{"end": true}`` every result was sent.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import threading
import time

HEARTBEAT = 0.25


class Asked(str):
    """A question's text that also carries its position, so the wrapper around the user's
    function knows which questions are being answered (the heartbeat's list)."""

    __slots__ = ("index",)


class _Query:
    __slots__ = ("id", "question")

    def __init__(self, qid: str, question: Asked):
        self.id, self.question = qid, question


class _Out:
    """The protocol descriptor, written whole lines at a time by two threads."""

    def __init__(self, fd: int):
        self.fd, self.lock, self.write_lock = fd, threading.Lock(), threading.Lock()
        self.pending: list = []
        self.since = time.monotonic()

    def add(self, index: int, result) -> None:
        """Queue one result; the batch goes when it is full or old enough (and, from the
        heartbeat's thread, whenever the next result is slow to come)."""
        with self.lock:
            self.pending.append((index, result))
            if len(self.pending) < BATCH and time.monotonic() - self.since < BATCH_SECONDS:
                return
        self.flush()

    def flush(self) -> None:
        with self.lock:
            batch, self.pending, self.since = self.pending, [], time.monotonic()
        if batch:
            self.send(packed(batch))

    def send(self, message: dict) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        with self.write_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]


def _tracked(fn, clock):
    """``fn`` that writes when each question's call started and returned into ``clock``
    (shared with the parent: it reads them even while the user's code holds this
    interpreter's lock, and so knows which call did)."""

    def mark(indices, slot: int) -> None:
        now = time.monotonic()
        for i in indices:
            clock[2 * i + slot] = now

    def one(question, depth, **params):
        indices = (question.index,) if isinstance(question, Asked) else ()
        mark(indices, 0)
        try:
            return fn(str(question), depth, **params)
        finally:
            mark(indices, 1)

    def batch(questions, depth, **params):
        indices = tuple(q.index for q in questions if isinstance(q, Asked))
        mark(indices, 0)
        try:
            return fn([str(q) for q in questions], depth, **params)
        finally:
            mark(indices, 1)

    return one, batch


def _beat(out: _Out) -> None:
    while True:
        out.flush()
        out.send({"hb": True})
        time.sleep(HEARTBEAT)


# Results go back in batches of up to BATCH, or whatever came within BATCH_SECONDS: one line
# (one write here, one parse there) for many questions, on the fast path.
BATCH, BATCH_SECONDS = 512, 0.02


def serve() -> None:
    # The protocol keeps the real stdout; the user's prints and the pipe's stdin are not ours.
    out = _Out(os.dup(1))
    os.dup2(2, 1)
    # ci-eval's own modules are imported while the parent still reads the gold set (the
    # setup comes when it is done); the user's code is imported only once it has come.
    from ci_eval.inputs import collector  # noqa: F401
    from ci_eval.retrieval import pipeline, python_runner  # noqa: F401

    data = sys.stdin.buffer.read()
    if not data:
        os._exit(0)  # not needed after all (a cached run, bad input): nothing was started
    setup = pickle.loads(data)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    import mmap

    shared = mmap.mmap(setup["clock_fd"], 16 * max(len(setup["questions"]), 1))
    clock = memoryview(shared).cast("d")
    threading.Thread(target=_beat, args=(out,), daemon=True).start()
    try:
        _answer(out, setup, clock)
    except BaseException as exc:  # noqa: BLE001 - the parent is told, whatever it was
        from ci_eval.errors import InputError

        kind = "input" if isinstance(exc, InputError) else "retriever"
        out.send({"fatal": kind, "message": getattr(exc, "message", None) or str(exc) or type(exc).__name__,
                  "source": getattr(exc, "source", None), "place": getattr(exc, "place", None)})
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        # Nothing of the user's (atexit handlers, non-daemon threads) runs after this.
        os._exit(0)


def _answer(out: _Out, setup: dict, clock) -> None:
    import importlib

    from ci_eval.retrieval import python_runner
    from ci_eval.retrieval.registry import RUNNER_MODULES

    config, known = setup["retriever_config"], setup["known_ids"]
    queries = []
    for index, (qid, text) in enumerate(setup["questions"]):
        asked = Asked(text)
        asked.index = index
        queries.append(_Query(qid, asked))
    one, batch = None, None

    def wrap(fn, is_batch: bool):
        nonlocal one, batch
        one, batch = _tracked(fn, clock)
        out.send({"ready": True})
        return batch if is_batch else one

    python_runner.WRAP_CALLABLE = wrap
    runner = importlib.import_module(RUNNER_MODULES[config.retriever.type]).runner
    stream = runner(config, queries, known)
    if setup["from_the_start"]:
        # What the run's pipeline does, here too: it sees the first failures only after they
        # are sent, and this process should not ask on meanwhile.
        from ci_eval.retrieval.pipeline import stop_when_all_fail_alike

        stream = stop_when_all_fail_alike(iter(stream), [q.id for q in queries])
    from ci_eval.inputs.collector import collections_spaced

    # As in ci-eval's own process during a run (inputs/collector.py): each result's
    # containers are freed once sent, and the collector run every 700 of them finds nothing.
    with collections_spaced():
        for index, (_, r) in enumerate(stream):
            out.add(index, r)
    out.flush()
    out.send({"end": True})


def packed(results: list) -> dict:
    """A batch of results as few JSON values as can hold them, so the parent parses a handful
    of strings rather than every id and score: ``{"p": {"i", "n", "ids", "s", "ms", "e", "w"}}``,
    the ids of the whole batch joined by NUL, the scores packed doubles (base64), and per
    result its position, its count of ids, latency, error and warnings. A batch with an id
    holding a NUL goes as ``{"r": [[i, ids, scores, ms, error, warnings], ...]}``."""
    import base64
    from array import array

    if any(r.stages or r.calls for _, r in results):  # a pipeline's stages go the long way, with them
        return {"r": [(i, r.ids, r.scores, r.latency_ms, r.error, r.warnings, r.stages, r.calls)
                      for i, r in results]}
    ids = [i for _, r in results for i in r.ids]
    joined = "\0".join(ids)
    if joined.count("\0") != max(len(ids) - 1, 0):
        return {"r": [(i, r.ids, r.scores, r.latency_ms, r.error, r.warnings) for i, r in results]}
    scores = array("d", [s for _, r in results for s in r.scores])
    return {"p": {"i": [i for i, _ in results], "n": [len(r.ids) for _, r in results], "ids": joined,
                  "s": base64.b64encode(scores.tobytes()).decode("ascii"),
                  "ms": [r.latency_ms for _, r in results], "e": [r.error for _, r in results],
                  "w": [r.warnings for _, r in results]}}
