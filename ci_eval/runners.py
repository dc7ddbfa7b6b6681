"""Retriever runners: the user's Python callable, a long-lived command, or a run file.

Each runner yields ``(question id, Retrieved)`` in question order, whatever order the work
finishes in, so the evaluation streams and never holds the results twice. A failure on one
question (an exception, a timeout, garbage output) is recorded on that question; the run
goes on and the gate fails closed on it.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ci_eval.core.results import ResultError, Retrieved, clean, failed, parse_pair
from ci_eval.errors import InputError, RetrieverError


@dataclass(frozen=True)
class Query:
    id: str
    question: str


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- python


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

    yield from _pool(call, queries, concurrency, timeout, total_timeout)


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
    for batch, results in _pool(call, batches, 1, timeout * batch_size, total_timeout, key=lambda b: b):
        if not isinstance(results, list):
            results = [results] * len(batch)
        for q, r in zip(batch, results):
            yield q.id, r


def _pool(call, items, concurrency, timeout, total_timeout, key=lambda q: q.id):
    """Run ``call`` over ``items`` on ``concurrency`` long-lived worker threads; yield
    ``(key(item), result)`` in input order. A call past ``timeout`` seconds is reported as
    failed, its worker is abandoned and a fresh one takes its place; past
    ``total_timeout`` the rest are not started. Workers are daemon threads, so a call
    that never returns cannot keep the process alive at exit."""
    inbox: queue.Queue = queue.Queue()
    done: queue.Queue = queue.Queue()
    started: dict[int, float] = {}  # written by workers when they pick an item up
    finished: dict[int, object] = {}
    abandoned: set[int] = set()
    deadline = time.monotonic() + total_timeout if total_timeout else None
    window = max(4 * concurrency, 64)  # how far ahead of the slowest item work may run
    n = len(items)
    next_to_queue = next_to_yield = 0

    def worker() -> None:
        while True:
            task = inbox.get()
            if task is None:
                return
            index, item = task
            started[index] = time.monotonic()
            result = call(item)
            done.put((index, result))
            if index in abandoned:
                return  # timed out: a replacement already took this worker's place

    def spawn() -> None:
        threading.Thread(target=worker, daemon=True).start()

    for _ in range(min(concurrency, n)):
        spawn()
    try:
        while next_to_yield < n:
            now = time.monotonic()
            out_of_time = deadline is not None and now >= deadline
            while not out_of_time and next_to_queue < n and next_to_queue - next_to_yield < window:
                inbox.put((next_to_queue, items[next_to_queue]))
                next_to_queue += 1
            if out_of_time:
                for index in range(next_to_yield, n):
                    if index not in finished:
                        what = "not finished" if index in started else "not run"
                        finished[index] = failed(f"{what}: the total timeout of {total_timeout:g}s passed")
                        abandoned.add(index)
            live = [t for i, t in list(started.items()) if i not in finished]
            wait = 0.05 if not live else max(0.0, min(0.05, min(live) + timeout - now))
            try:
                index, result = done.get(timeout=wait)
                if index not in finished:
                    finished[index] = result
                while True:  # drain what else is ready without waiting
                    index, result = done.get_nowait()
                    if index not in finished:
                        finished[index] = result
            except queue.Empty:
                pass
            now = time.monotonic()
            for index, t0 in list(started.items()):
                if index not in finished and now - t0 > timeout:
                    finished[index] = failed(f"no answer within the {timeout:g}s timeout", timeout * 1000)
                    abandoned.add(index)
                    spawn()
            while next_to_yield in finished:
                result = finished.pop(next_to_yield)
                started.pop(next_to_yield, None)
                yield key(items[next_to_yield]), result
                next_to_yield += 1
    finally:
        # Drop what was never started, then let each worker finish its current item and stop.
        while True:
            try:
                inbox.get_nowait()
            except queue.Empty:
                break
        for _ in range(concurrency + len(abandoned)):
            inbox.put(None)


# --------------------------------------------------------------------------- command


class _Process:
    """One running retriever process, with stdout lines and the tail of stderr collected on
    threads so that a flood on stderr can never block it."""

    def __init__(self, argv: Sequence[str], env: dict, cwd: str | None):
        try:
            self.proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **env},
                cwd=cwd,
                bufsize=0,
            )
        except FileNotFoundError:
            raise RetrieverError(f"retriever command not found: {argv[0]!r}") from None
        except PermissionError:
            raise RetrieverError(f"retriever command is not executable: {argv[0]!r}") from None
        self.lines: queue.Queue = queue.Queue()
        self.stderr_tail: deque[str] = deque(maxlen=5)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    def _read_stdout(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            text = line.decode("utf-8", "replace").strip()
            if text:
                self.stderr_tail.append(text[:300])

    def send(self, payload: dict) -> bool:
        try:
            self.proc.stdin.write((json.dumps(payload) + "\n").encode("utf-8"))
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def why_gone(self) -> str:
        # stdout can close a moment before the process is reaped and its last stderr read.
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_reader.join(timeout=1)
        code = self.proc.poll()
        tail = f"; its stderr ends: {_one_line(self.stderr_tail[-1], 200)}" if self.stderr_tail else ""
        return f"the retriever exited with code {code}{tail}" if code is not None else "the retriever stopped answering"

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run_command(
    argv: Sequence[str],
    queries: Sequence[Query],
    k: int,
    depth: int,
    params: dict | None = None,
    env: dict | None = None,
    concurrency: int = 4,
    timeout: float = 30.0,
    total_timeout: float | None = None,
    known_ids=None,
    cwd: str | None = None,
    max_restarts: int = 2,
) -> Iterator[tuple[str, Retrieved]]:
    """Start the command once; write ``{"id", "question", "k"}`` lines to its stdin and read
    ``{"id", "results": [{"id", "score"}]}`` lines from its stdout, matched by id, so the
    command may answer out of order. Up to ``concurrency`` questions are in flight. A hung
    or crashed process is restarted (at most ``max_restarts`` times) for the questions left.
    ``params`` reach the command as JSON in the CI_EVAL_PARAMS environment variable."""
    env = dict(env or {})
    env["CI_EVAL_PARAMS"] = json.dumps(params or {}, sort_keys=True)
    deadline = time.monotonic() + total_timeout if total_timeout else None
    order = [q.id for q in queries]
    by_id = {q.id: q for q in queries}
    pending = deque(order)
    results: dict[str, Retrieved] = {}
    yielded = 0
    restarts = 0
    proc = _Process(argv, env, cwd)
    sent_at: dict[str, float] = {}
    garbage = 0

    def flush():
        nonlocal yielded
        while yielded < len(order) and order[yielded] in results:
            qid = order[yielded]
            yielded += 1
            yield qid, results.pop(qid)

    try:
        while yielded < len(order):
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                for qid in list(sent_at) + list(pending):
                    what = "not finished" if qid in sent_at else "not run"
                    results[qid] = failed(f"{what}: the total timeout of {total_timeout:g}s passed")
                sent_at.clear()
                pending.clear()
                yield from flush()
                break
            while pending and len(sent_at) < concurrency:
                qid = pending[0]
                if not proc.send({"id": qid, "question": by_id[qid].question, "k": depth}):
                    break
                pending.popleft()
                sent_at[qid] = time.monotonic()
            wait = 0.2
            if sent_at:
                wait = max(0.0, min(wait, min(sent_at.values()) + timeout - now))
            try:
                line = proc.lines.get(timeout=wait)
            except queue.Empty:
                line = b""
            gone = line is None
            if line:
                qid, result = _parse_answer(line, depth, sent_at, known_ids)
                if qid is None:
                    garbage += 1
                else:
                    results[qid] = result
                    sent_at.pop(qid)
            now = time.monotonic()
            late = [q for q, t in sent_at.items() if now - t > timeout]
            if gone or late:
                reason = proc.why_gone() if gone else f"no answer within the {timeout:g}s timeout"
                for qid in late if not gone else list(sent_at):
                    results[qid] = failed(reason, (now - sent_at.pop(qid)) * 1000)
                # Questions already sent to the dead or stuck process go back to the front.
                pending.extendleft(reversed(list(sent_at)))
                sent_at.clear()
                proc.stop() if gone else proc.proc.kill()
                if pending and restarts < max_restarts:
                    restarts += 1
                    proc = _Process(argv, env, cwd)
                elif pending:
                    for qid in pending:
                        results[qid] = failed(f"not run: {reason}, and it was restarted {restarts} times")
                    pending.clear()
            yield from flush()
    finally:
        proc.stop()
    if garbage:
        # Lines we could not attribute to a question: say so once; the questions themselves
        # are already failed by their timeouts if they never got a usable answer.
        import sys

        print(f"ci-eval: warning: the retriever wrote {garbage} unusable line(s) on stdout", file=sys.stderr)


def _parse_answer(line: bytes, depth: int, sent_at: dict, known_ids):
    try:
        msg = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, None
    if not isinstance(msg, dict) or not isinstance(msg.get("id"), (str, int)):
        return None, None
    qid = str(msg["id"])
    if qid not in sent_at:
        return None, None  # an answer to nothing we asked (or asked twice): ignore
    latency = (time.monotonic() - sent_at[qid]) * 1000
    if "error" in msg and "results" not in msg:
        return qid, failed(f"retriever reported: {_one_line(msg['error'])}", latency)
    try:
        return qid, clean(msg.get("results"), depth, latency, known_ids)
    except ResultError as exc:
        return qid, failed(f"unusable result: {exc}", latency)


# --------------------------------------------------------------------------- run file


def read_run_file(path: str, fmt: str, source: str) -> dict[str, list[tuple[str, float]]]:
    """A precomputed run: TREC (``qid Q0 docid rank score tag``) or JSON lines."""
    from ci_eval.files import decode, read_bytes

    if fmt == "trec":
        from ci_eval.trec import read_run_pairs

        return read_run_pairs(path)
    raw = read_bytes(path, "run file")
    text = decode(raw, path)
    run: dict[str, list] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError as exc:
            raise InputError(f"invalid JSON: {exc}", path, f"line {n}") from None
        if not isinstance(msg, dict) or not isinstance(msg.get("id"), str):
            raise InputError('expected an object with a string "id"', path, f"line {n}")
        if not isinstance(msg.get("results"), list):
            raise InputError('expected "results": a list of {"id", "score"}', path, f"line {n}")
        if msg["id"] in run:
            raise InputError(f"question {msg['id']!r} appears twice", path, f"line {n}")
        # The file is the user's input, not a live retriever: a bad entry is a bad file
        # (exit 2, with its line), not a question the retriever failed on.
        seen: set[str] = set()
        for position, item in enumerate(msg["results"], 1):
            try:
                cid, _ = parse_pair(item, position)
            except ResultError as exc:
                raise InputError(f"question {msg['id']!r}: {exc}", path, f"line {n}") from None
            # As trec_eval does for a TREC run: one document twice in a query is an error.
            if cid in seen:
                raise InputError(f"question {msg['id']!r}: document {cid!r} appears twice", path, f"line {n}")
            seen.add(cid)
        run[msg["id"]] = msg["results"]
    return run


def run_from_file(
    run: dict, queries: Sequence[Query], depth: int, source: str, known_ids=None
) -> Iterator[tuple[str, Retrieved]]:
    for q in queries:
        if q.id not in run:
            # trec_eval -c: a question missing from the run scores 0 and counts.
            yield q.id, Retrieved(warnings=(f"not in the run file {source}",))
            continue
        try:
            yield q.id, clean(run[q.id], depth, None, known_ids)
        except ResultError as exc:
            yield q.id, failed(f"unusable result in {source}: {exc}")


def iter_queries(questions: Iterable) -> list[Query]:
    return [Query(q.id, q.question) for q in questions]
