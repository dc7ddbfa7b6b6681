"""Retriever type ``python``: the user's callable, one question or one batch per call."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

from ci_eval.core.results import ResultError, Retrieved, clean, failed
from ci_eval.retrieval.pool import run_pool
from ci_eval.retrieval.query import Query, _one_line


def run_callable(
    fn: Callable,
    queries: Sequence[Query],
    k: int,
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
    """
    params = params or {}

    def call(q: Query) -> Retrieved:
        start = time.perf_counter()
        try:
            raw = fn(q.question, depth, **params)
            # A generator runs here, inside the timing and the try, not later in clean().
            if raw is not None and not isinstance(raw, (list, tuple, dict, str, bytes)):
                raw = list(raw)
            latency = (time.perf_counter() - start) * 1000
            return clean(raw, depth, latency, known_ids)
        except ResultError as exc:
            return failed(f"unusable result: {exc}", (time.perf_counter() - start) * 1000)
        except Exception as exc:  # the user's code failed on this question
            return failed(
                f"retriever raised {type(exc).__name__}: {_one_line(exc)}",
                (time.perf_counter() - start) * 1000,
            )

    yield from run_pool(call, queries, concurrency, timeout, total_timeout)


def run_callable_batch(
    fn: Callable,
    queries: Sequence[Query],
    k: int,
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
    batches = [tuple(queries[i : i + batch_size]) for i in range(0, len(queries), batch_size)]

    def call(batch: Sequence[Query]) -> list[Retrieved]:
        start = time.perf_counter()
        try:
            raw = list(fn([q.question for q in batch], depth, **params))
        except Exception as exc:
            msg = f"retriever raised {type(exc).__name__}: {_one_line(exc)}"
            return [failed(msg) for _ in batch]
        latency = (time.perf_counter() - start) * 1000 / max(len(batch), 1)
        if len(raw) != len(batch):
            msg = f"batch of {len(batch)} questions returned {len(raw)} result lists"
            return [failed(msg, latency) for _ in batch]
        out = []
        for item in raw:
            try:
                out.append(clean(item, depth, latency, known_ids))
            except ResultError as exc:
                out.append(failed(f"unusable result: {exc}", latency))
        return out

    # A batch that times out comes back as one failed Retrieved: give it to each question.
    for batch, results in run_pool(call, batches, 1, timeout * batch_size, total_timeout, key=lambda b: b):
        if not isinstance(results, list):
            results = [results] * len(batch)
        for q, r in zip(batch, results):
            yield q.id, r


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    from ci_eval.inputs.pyimport import import_target
    from ci_eval.retrieval.extract import adapt_callable

    r = config.retriever
    fn = adapt_callable(import_target(r.target, config.source, "retriever.target"), r.id_from, r.score, r.batch)
    if r.batch:
        return run_callable_batch(fn, queries, config.k, r.depth, r.params, timeout=r.timeout,
                                  total_timeout=r.total_timeout, known_ids=known_ids)
    return run_callable(fn, queries, config.k, r.depth, r.params, r.concurrency, r.timeout,
                        r.total_timeout, known_ids)
