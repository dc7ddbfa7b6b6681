"""Retriever type ``python``: the user's callable, one question or one batch per call."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat

from ci_eval.core.artefact.results import ResultError, Retrieved, clean_answer, clean_batch, failed
from ci_eval.errors import InputError
from ci_eval.inputs.pyimport import ImportFailed, describe_failure, import_target, os_exit_raises
from ci_eval.retrieval.pool import run_pool
from ci_eval.retrieval.query import Query

# Set only in retrieval/worker_serve.py's process: ``WRAP_CALLABLE(fn, batch)`` is the
# function to call instead of ``fn`` (it records which questions are being answered).
WRAP_CALLABLE = None


def _wrapped(fn: Callable, batch: bool) -> Callable:
    return fn if WRAP_CALLABLE is None else WRAP_CALLABLE(fn, batch)


def _materialise(raw):
    # A generator runs here, inside the timing and the try, not later in clean().
    if type(raw) is list:
        return raw  # the common answer, asked first
    if hasattr(raw, "__iter__") and not isinstance(raw, (list, tuple, dict, str, bytes)):
        raw = list(raw)
    return raw


def run_callable(
    fn: Callable,
    queries: Sequence[Query],
    depth: int,
    params: dict | None = None,
    concurrency: int = 4,
    timeout: float = 30.0,
    total_timeout: float | None = None,
    known_ids=None,
) -> Iterator[tuple[str, Retrieved]]:
    """Call ``fn(question, depth, **params)`` for each query on a pool of daemon threads.

    The retriever is asked for ``depth`` results (at least 3k) so the artefact can tell
    "just past k" from "gone". Daemon threads, not a ThreadPoolExecutor: a call that hangs
    past its timeout is abandoned and replaced, and must not keep the process alive at exit.
    Whatever the call does (returns None, raises, calls sys.exit or os._exit) fails that
    question and no other.
    """
    params = params or {}
    fn = _wrapped(fn, False)

    def call(q: Query) -> Retrieved:
        start = time.perf_counter()
        try:
            raw = _materialise(fn(q.question, depth, **params))
            latency = (time.perf_counter() - start) * 1000
            return clean_answer(raw, depth, latency, known_ids)
        except ResultError as exc:
            return failed(f"unusable result: {exc}", (time.perf_counter() - start) * 1000)
        except BaseException as exc:  # noqa: BLE001 - user code on a worker thread: nothing may escape
            return failed(f"retriever {describe_failure(exc)}", (time.perf_counter() - start) * 1000)

    with os_exit_raises():
        yield from run_pool(call, queries, concurrency, timeout, total_timeout)


def run_callable_batch(
    fn: Callable,
    queries: Sequence[Query],
    depth: int,
    params: dict | None = None,
    batch_size: int = 32,
    timeout: float = 30.0,
    total_timeout: float | None = None,
    known_ids=None,
) -> Iterator[tuple[str, Retrieved]]:
    """Call ``fn(list_of_questions, depth, **params)`` on batches; one latency per batch,
    shared out evenly among its questions."""
    params = params or {}
    fn = _wrapped(fn, True)
    batches = [tuple(queries[i : i + batch_size]) for i in range(0, len(queries), batch_size)]

    def call(batch: Sequence[Query]) -> list[Retrieved]:
        start = time.perf_counter()
        try:
            raw = fn([q.question for q in batch], depth, **params)
            if raw is None:
                return [failed("unusable result: the batch call returned None (a missing return?)")
                        for _ in batch]
            raw = list(raw)
        except BaseException as exc:  # noqa: BLE001 - see run_callable
            msg = f"retriever {describe_failure(exc)}"
            return [failed(msg) for _ in batch]
        latency = (time.perf_counter() - start) * 1000 / max(len(batch), 1)
        if len(raw) != len(batch):
            msg = f"batch of {len(batch)} questions returned {len(raw)} result lists"
            return [failed(msg, latency) for _ in batch]
        # the batch's answers checked together when each is the common case, else one at a time
        out = clean_batch(raw, depth, repeat(latency), known_ids)
        if out is not None:
            return out
        out = []
        for item in raw:
            try:
                out.append(clean_answer(_materialise(item), depth, latency, known_ids))
            except ResultError as exc:
                out.append(failed(f"unusable result: {exc}", latency))
            except BaseException as exc:  # noqa: BLE001 - a generator item of the user's
                out.append(failed(f"retriever {describe_failure(exc)}", latency))
        return out

    # A batch that times out comes back as one failed Retrieved: give it to each question.
    with os_exit_raises():
        for batch, results in run_pool(call, batches, 1, timeout * batch_size, total_timeout, key=lambda b: b):
            if not isinstance(results, list):
                results = [results] * len(batch)
            for q, r in zip(batch, results):
                yield q.id, r


def _all_failed(queries: Sequence[Query], message: str) -> Iterator[tuple[str, Retrieved]]:
    for q in queries:
        yield q.id, failed(message)


def _warm_up(config) -> str | None:
    """Call ``retriever.warmup`` once with the params, before the first question: what it
    takes (an index built or loaded) counts against no question's timeout, only the total
    one. What went wrong, as every question's error, or None."""
    r = config.retriever
    try:
        fn = import_target(r.warmup, config.source, "retriever.warmup", config.base_dir)
        with os_exit_raises():
            fn(**r.params)
    except ImportFailed as exc:
        return exc.message
    except InputError as exc:
        return f"retriever.warmup: {exc.message}"
    except BaseException as exc:  # noqa: BLE001 - the user's code: every question fails with it
        return f"retriever.warmup {describe_failure(exc)}"
    return None


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    from ci_eval.retrieval.extract import adapt_callable

    r = config.retriever
    try:
        fn = import_target(r.target, config.source, "retriever.target", config.base_dir)
    except ImportFailed as exc:
        # The module exists but raised or exited while imported: every question is an error
        # (written to the artefact, exit 4), as if each call had failed the same way.
        return _all_failed(queries, exc.message)
    if r.warmup:
        problem = _warm_up(config)
        if problem:
            return _all_failed(queries, problem)
    fn = adapt_callable(fn, r.id_from, r.score, r.batch)
    if r.batch:
        return run_callable_batch(fn, queries, r.depth, r.params, timeout=r.timeout,
                                  total_timeout=r.total_timeout, known_ids=known_ids)
    return run_callable(fn, queries, r.depth, r.params, r.concurrency, r.timeout,
                        r.total_timeout, known_ids)
