"""Retriever type ``command``: a long-lived process speaking JSON lines on stdin/stdout."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence

from ci_eval.core.results import ResultError, Retrieved, clean, failed
from ci_eval.errors import RetrieverError
from ci_eval.core.text import one_line
from ci_eval.retrieval.query import Query


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
        tail = f"; its stderr ends: {one_line(self.stderr_tail[-1], 200)}" if self.stderr_tail else ""
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
        return qid, failed(f"retriever reported: {one_line(msg['error'])}", latency)
    try:
        return qid, clean(msg.get("results"), depth, latency, known_ids)
    except ResultError as exc:
        return qid, failed(f"unusable result: {exc}", latency)


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    r = config.retriever
    # The command runs in the config file's folder, so `./retriever.sh` and relative paths
    # inside it mean the same from any working folder.
    return run_command(r.command, queries, r.depth, r.params, r.env, r.concurrency,
                       r.timeout, r.total_timeout, known_ids, cwd=config.base_dir or None)
