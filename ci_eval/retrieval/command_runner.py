"""Retriever type ``command``: a long-lived process speaking JSON lines on stdin/stdout.

The process is the user's code, and nothing it does may hold the run:

- questions are written to its stdin by a writer thread, so one that never reads stdin
  fills the pipe without blocking ci-eval: its questions time out like any unanswered one;
- its stdout and stderr are read in chunks on threads, and a line longer than
  ``MAX_LINE_BYTES`` is cut off (the questions in flight fail) instead of being held in
  memory whole;
- it runs in its own process group (a new session), and the whole group is killed when it
  crashes, hangs or the run ends, so a child it forked cannot keep the pipes open or
  outlive ci-eval; so is any process it started that left the group with ``setsid()``
  (found by the mark in its environment, retrieval/process_marks.py);
- its environment is the user's, minus GitHub's token and the action's ``INPUT_*`` values.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ci_eval.core.artefact.results import ResultError, Retrieved, clean, clean_staged, failed
from ci_eval.core.text import one_line
from ci_eval.errors import RetrieverError
from ci_eval.retrieval.query import Query

# The longest stdout line read from a retriever: an answer of 10,000 results with
# 1,000-character ids fits (depth and id length are capped at that). Longer is a broken
# retriever, and holding it would cost memory without bound.
MAX_LINE_BYTES = 16 * 1024 * 1024
_CHUNK = 64 * 1024
# Stands in the stdout queue for a line that was longer than MAX_LINE_BYTES.
OVERLONG = object()


def _lines(fd: int, emit, limit: int) -> None:
    """Read ``fd`` to its end in chunks; ``emit(line)`` each complete line (without its
    newline), ``emit(OVERLONG)`` once for a line over ``limit`` bytes, whose rest is skipped."""
    partial = bytearray()
    skipping = False
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not skipping:
                partial += piece
                if len(partial) > limit:
                    emit(OVERLONG)
                    partial.clear()
                    skipping = True
            if end < 0:
                break
            if not skipping:
                emit(bytes(partial))
            partial.clear()
            skipping = False
            start = end + 1
    if partial and not skipping:
        emit(bytes(partial))


def retriever_environ(extra: dict) -> dict:
    """What the retriever process sees: this process's environment without the secrets
    (see ``github.env.without_secrets``), then the config's ``env`` on top."""
    from ci_eval.github.env import without_secrets

    return {**without_secrets(os.environ), **extra}


class _Process:
    """One running retriever process group, with threads for stdin, stdout and stderr."""

    def __init__(self, argv: Sequence[str], env: dict, cwd: str | None):
        from ci_eval.retrieval.process_marks import MARK, new_mark

        self.mark = new_mark()  # found again in whatever it starts, in its group or not
        try:
            self.proc = subprocess.Popen(
                list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env={**retriever_environ(env), MARK: self.mark}, cwd=cwd, bufsize=0, start_new_session=True,
            )
        except FileNotFoundError:
            raise RetrieverError(f"retriever command not found: {argv[0]!r}") from None
        except PermissionError:
            raise RetrieverError(f"retriever command is not executable: {argv[0]!r}") from None
        self.lines: queue.Queue = queue.Queue()
        self.stderr_tail: deque[str] = deque(maxlen=5)
        self._outbox: queue.Queue = queue.Queue()
        self._broken = threading.Event()
        threading.Thread(target=self._write_stdin, daemon=True).start()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    def _write_stdin(self) -> None:
        # Blocking writes happen here, never on the thread that keeps the timeouts.
        fd = self.proc.stdin.fileno()
        while True:
            data = self._outbox.get()
            if data is None:
                break
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            except OSError:
                self._broken.set()
                break
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def _read_stdout(self) -> None:
        _lines(self.proc.stdout.fileno(), self.lines.put, MAX_LINE_BYTES)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        def keep(line) -> None:
            if line is OVERLONG:
                self.stderr_tail.append(f"(a line over {MAX_LINE_BYTES:,} bytes)")
                return
            text = line[:1200].decode("utf-8", "replace").strip()
            if text:
                self.stderr_tail.append(text[:300])

        _lines(self.proc.stderr.fileno(), keep, MAX_LINE_BYTES)

    def send(self, payload: dict) -> bool:
        """Queue one question; False once the process has stopped taking input."""
        if self._broken.is_set() or self.proc.poll() is not None:
            return False
        self._outbox.put((json.dumps(payload) + "\n").encode("utf-8"))
        return True

    def leader_exited(self) -> bool:
        """The process ci-eval started is gone. Its group is killed, so that a child still
        holding the pipes lets go and the reader sees the end of stdout."""
        if self.proc.poll() is None:
            return False
        self.kill_group()
        return True

    def why_gone(self) -> str:
        # stdout can close a moment before the process is reaped and its last stderr read.
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_reader.join(timeout=1)
        code = self.proc.poll()
        tail = f"; its stderr ends: {one_line(self.stderr_tail[-1], 200)}" if self.stderr_tail else ""
        return f"the retriever exited with code {code}{tail}" if code is not None else "the retriever stopped answering"

    def kill_group(self) -> None:
        from ci_eval.retrieval.process_marks import kill_marked

        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group is already empty
        kill_marked(self.mark)  # a child that left the group with setsid()

    def stop(self, graceful: bool = True) -> None:
        """End of stdin first (a well-behaved retriever exits on it), then the group; a
        crashed or hung one is not waited for."""
        self._outbox.put(None)
        if graceful and self.proc.poll() is None:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self.kill_group()
        self.proc.wait()


@contextmanager
def _terminate_unwinds():
    """SIGTERM (a cancelled job, ``kill``) ends Python without running ``finally``; while a
    command retriever runs, it raises SystemExit instead, so the retriever's group is ended
    on the way out. Left alone when another handler is installed or off the main thread."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def unwind(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, unwind)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _Session:
    """The questions of one ``run_command`` call and where each one stands."""

    def __init__(self, queries: Sequence[Query], timeout: float, total_timeout: float | None):
        self.order = [q.id for q in queries]
        self.by_id = {q.id: q for q in queries}
        self.pending = deque(self.order)
        self.sent_at: dict[str, float] = {}
        self.results: dict[str, Retrieved] = {}
        self.yielded = 0
        self.timeout = timeout
        self.total_timeout = total_timeout
        self.deadline = time.monotonic() + total_timeout if total_timeout else None
        self.garbage = 0
        self.proc: _Process | None = None  # the process now answering

    def done(self) -> bool:
        return self.yielded >= len(self.order)

    def ready(self) -> Iterator[tuple[str, Retrieved]]:
        while self.yielded < len(self.order) and self.order[self.yielded] in self.results:
            qid = self.order[self.yielded]
            self.yielded += 1
            yield qid, self.results.pop(qid)

    def fail_all_left(self) -> None:
        for qid in list(self.sent_at) + list(self.pending):
            what = "not finished" if qid in self.sent_at else "not run"
            self.results[qid] = failed(f"{what}: the total timeout of {self.total_timeout:g}s passed")
        self.sent_at.clear()
        self.pending.clear()

    def fail_in_flight(self, reason: str) -> None:
        now = time.monotonic()
        for qid, at in self.sent_at.items():
            self.results[qid] = failed(reason, (now - at) * 1000)
        self.sent_at.clear()

    def wait(self) -> float:
        if not self.sent_at:
            return 0.2
        return max(0.0, min(0.2, min(self.sent_at.values()) + self.timeout - time.monotonic()))


def _step(s: _Session, proc: _Process, depth: int, concurrency: int, known_ids) -> str | None:
    """Send what may be sent, take one line; why the process must be replaced, or None."""
    while s.pending and len(s.sent_at) < concurrency:
        qid = s.pending[0]
        if not proc.send({"id": qid, "question": s.by_id[qid].question, "k": depth}):
            break
        s.pending.popleft()
        s.sent_at[qid] = time.monotonic()
    try:
        line = proc.lines.get(timeout=s.wait())
    except queue.Empty:
        line = b""
        proc.leader_exited()  # a dead leader's children are ended; stdout then closes
    if line is None:
        reason = proc.why_gone()
        s.fail_in_flight(reason)
        return reason
    if line is OVERLONG:
        s.fail_in_flight(f"the retriever wrote a line over {MAX_LINE_BYTES:,} bytes (the limit)")
    elif line:
        qid, result = _parse_answer(line, depth, s.sent_at, known_ids)
        if qid is None:
            s.garbage += 1
        else:
            s.results[qid] = result
            s.sent_at.pop(qid)
    now = time.monotonic()
    late = [q for q, t in s.sent_at.items() if now - t > s.timeout]
    if late:
        reason = f"no answer within the {s.timeout:g}s timeout"
        for qid in late:
            s.results[qid] = failed(reason, (now - s.sent_at.pop(qid)) * 1000)
        return reason
    return None


def _drive(s: _Session, start, depth: int, concurrency: int, known_ids, max_restarts: int):
    """The questions through ``s.proc`` until each has a result; a crashed or hung process
    is replaced by ``start()`` at most ``max_restarts`` times."""
    restarts = 0
    while not s.done():
        if s.deadline is not None and time.monotonic() >= s.deadline:
            s.fail_all_left()
            yield from s.ready()
            return
        reason = _step(s, s.proc, depth, concurrency, known_ids)
        if reason is not None:
            # Questions already sent to the dead or stuck process go back to the front.
            s.pending.extendleft(reversed(list(s.sent_at)))
            s.sent_at.clear()
            s.proc.stop(graceful=False)
            if s.pending and restarts < max_restarts:
                restarts += 1
                s.proc = start()
            elif s.pending:
                for qid in s.pending:
                    s.results[qid] = failed(f"not run: {reason}, and it was restarted {restarts} times")
                s.pending.clear()
        yield from s.ready()


def run_command(
    argv: Sequence[str],
    queries: Sequence[Query],
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
    ``{"id", "results": [{"id", "score"}]}`` lines from its stdout (with ``"stages"`` or
    ``"calls"`` besides, results.clean_staged), matched by id, so the
    command may answer out of order. Up to ``concurrency`` questions are in flight. A hung
    or crashed process is restarted (at most ``max_restarts`` times) for the questions left.
    ``params`` reach the command as JSON in the CI_EVAL_PARAMS environment variable."""
    env = {**(env or {}), "CI_EVAL_PARAMS": json.dumps(params or {}, sort_keys=True)}
    s = _Session(queries, timeout, total_timeout)
    with _terminate_unwinds():
        s.proc = _Process(argv, env, cwd)
        try:
            yield from _drive(s, lambda: _Process(argv, env, cwd), depth, concurrency, known_ids,
                              max_restarts)
        finally:
            s.proc.stop()
    if s.garbage:
        # Lines we could not attribute to a question: say so once; the questions themselves
        # are already failed by their timeouts if they never got a usable answer.
        import sys

        print(f"ci-eval: warning: the retriever wrote {s.garbage} unusable line(s) on stdout", file=sys.stderr)


def _parse_answer(line: bytes, depth: int, sent_at: dict, known_ids):
    try:
        msg = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, None
    if not isinstance(msg, dict) or not isinstance(msg.get("id"), (str, int)):
        return None, None
    qid = str(msg["id"])
    if qid not in sent_at:
        return None, None  # an answer to nothing we asked (or asked twice): ignore
    latency = (time.monotonic() - sent_at[qid]) * 1000
    if "error" in msg and "results" not in msg:
        return qid, failed(f"retriever reported: {one_line(msg['error'])}", latency)
    try:
        if "stages" in msg or "calls" in msg:
            return qid, clean_staged(msg, depth, latency, known_ids)
        return qid, clean(msg.get("results"), depth, latency, known_ids)
    except ResultError as exc:
        return qid, failed(f"unusable result: {exc}", latency)


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    r = config.retriever
    # The command runs in the config file's folder, so `./retriever.sh` and relative paths
    # inside it mean the same from any working folder.
    return run_command(r.command, queries, r.depth, r.params, r.env, r.concurrency,
                       r.timeout, r.total_timeout, known_ids, cwd=config.base_dir or None)
