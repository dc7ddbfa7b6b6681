"""Where generated questions come from: an OpenAI-compatible chat-completions endpoint (hosted
APIs, Ollama, vLLM, llama.cpp's server) spoken to with the standard library alone, or the
user's command reading chunks on stdin; and the cache that keeps a re-run from asking twice."""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import shlex
import subprocess
import time
from collections.abc import Callable, Sequence

from ci_eval import __version__
from ci_eval.core.gold.generation import Source
from ci_eval.core.text import mend_surrogates, one_line, scrub
from ci_eval.errors import InputError
from ci_eval.gold import model_http
from ci_eval.inputs.files import atomic_append

RETRIED = (429, 500, 502, 503, 504)
LONGEST_WAIT = 120.0  # a Retry-After beyond this is a server asking us to come back another day


def chat_url(endpoint: str) -> str:
    """``http://host/v1`` or the full ``.../chat/completions`` address: both are what users copy."""
    url = endpoint.rstrip("/")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


def retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Budget:
    """The most requests one run may make; a run that reaches it stops and says so."""

    def __init__(self, limit: int):
        self.limit, self.used = limit, 0

    def take(self) -> bool:
        if self.used >= self.limit:
            return False
        self.used += 1
        return True


class ChatEndpoint:
    """An OpenAI-compatible chat-completions endpoint, through the one model-endpoint client
    (gold/model_http.py: no redirect followed, one deadline for a whole answer, a bound on
    its size). Every message it raises is scrubbed of the key, and every answer's lone
    surrogates are mended, so nothing it says or returns can leak the key or fail to be
    written as UTF-8."""

    def __init__(self, endpoint: str, model: str, key: str | None, *, timeout: float = 60.0,
                 retries: int = 4, backoff: float = 1.0, sleep: Callable[[float], None] = time.sleep):
        self.url, self.model, self.key = chat_url(endpoint), model, key
        self.timeout, self.retries, self.backoff, self.sleep = timeout, retries, backoff, sleep
        self.identity = f"endpoint {self.url} model {model}"

    def ask(self, prompt: str, budget: Budget) -> str:
        """The model's answer text. Retried with exponential backoff on a refused connection,
        a connection cut mid-answer, 429 and 5xx; a Retry-After header (seconds or a date) is
        honoured. An answer later than the timeout is not retried: it would be as late again.
        The budget running out between answers raises BudgetSpent; running out while one
        answer is being retried is that answer's failure, named."""
        try:
            return self._ask(prompt, budget)
        except InputError as exc:
            raise InputError(scrub(exc.message, self.key), exc.source and scrub(exc.source, self.key),
                             exc.place) from None

    def _ask(self, prompt: str, budget: Budget) -> str:
        body = json.dumps({"model": self.model, "temperature": 0,
                           "messages": [{"role": "user", "content": prompt}]}).encode("utf-8")
        headers = {"Content-Type": "application/json", "User-Agent": f"ci-eval/{__version__}"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        problem = ""
        for attempt in range(self.retries + 1):
            if not budget.take():
                if problem:
                    raise InputError(f"{problem} (the request budget ran out after {attempt} attempt(s); "
                                     "answers so far are cached)", "--endpoint")
                raise BudgetSpent()
            try:
                answer = model_http.post(self.url, body, headers, self.timeout)
            except model_http.Failed as exc:
                if not exc.again:
                    raise InputError(exc.message, "--endpoint") from None
                problem, wait = exc.message, None
            else:
                if answer.status == 200:
                    return _content(answer.body, self.url)
                problem = f"{self.url} answered HTTP {answer.status}: {_error_message(answer.body, self.key)}"
                if answer.status not in RETRIED:
                    raise InputError(problem, "--endpoint")
                wait = retry_after(answer.headers.get("retry-after"))
            if attempt < self.retries:
                self.sleep(min(LONGEST_WAIT, wait if wait is not None else self.backoff * 2 ** attempt))
        raise InputError(f"{problem} (after {self.retries + 1} attempts; answers so far are cached)", "--endpoint")


class BudgetSpent(Exception):
    """The request budget ran out; the questions gathered so far are kept."""


def _error_message(raw: bytes, key: str | None) -> str:
    """The API's own words for an error (its ``error.message``, else the body), scrubbed of
    the key before they are cut to one short line."""
    text = raw.decode("utf-8", "replace")
    try:
        error = json.loads(text).get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str) and message.strip():
            text = message
    except (ValueError, AttributeError, RecursionError):
        pass
    return one_line(mend_surrogates(scrub(text, key)), 200) or "(empty body)"


def _content(raw: bytes, url: str) -> str:
    try:
        content = json.loads(raw)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):
        raise InputError("answered something that is not a chat completion (no choices[0].message.content)",
                         url) from None
    if not isinstance(content, str):
        raise InputError("answered a chat completion whose message content is not text", url)
    # "\ud83d" alone parses as JSON but is no character: mended, not refused, as the same
    # model would answer the same again
    return mend_surrogates(content)


class CommandGenerator:
    """The user's command: chunks in, one ``{"id", "doc", "text", "count"}`` a line on stdin;
    questions out, ``{"chunk": id, "question": "..."}`` (or ``"questions": [...]``) a line."""

    def __init__(self, command: str, timeout: float = 600.0):
        self.argv = shlex.split(command)
        self.timeout = timeout
        self.identity = f"command {command}"

    def exchange(self, lines: Sequence[dict], what: str, option: str):
        """Run the command once with ``lines`` as JSON lines on stdin; yield ``(line number,
        parsed line)`` for each non-empty line it wrote. ``what`` names the command in the
        errors ("the generator"), ``option`` is their place."""
        from ci_eval.github.env import without_secrets  # the environment every child of ci-eval gets

        feed = "".join(json.dumps(line) + "\n" for line in lines)
        try:
            # undecodable bytes on its stdout become U+FFFD, not a crash
            done = subprocess.run(self.argv, input=feed, capture_output=True, encoding="utf-8", errors="replace",
                                  timeout=self.timeout, env=without_secrets(os.environ))
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InputError(f"{what} did not run: {exc}", option) from None
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["(no stderr)"])[-1]
            raise InputError(f"{what} exited with {done.returncode}: {tail}", option)
        for n, line in enumerate(done.stdout.split("\n"), 1):
            if not line.strip():
                continue
            try:
                yield n, json.loads(line)
            except (ValueError, RecursionError):
                raise InputError(f"{what} wrote a line that is not JSON", option, f"stdout line {n}") from None

    def run(self, sources: Sequence[Source], per_chunk: int) -> dict[str, list[str]]:
        lines = [{"id": s.id, "doc": s.doc, "text": s.text, "count": per_chunk} for s in sources]
        wanted = {s.id for s in sources}
        out: dict[str, list[str]] = {}
        for n, item in self.exchange(lines, "the generator", "--command"):
            chunk = item.get("chunk") if isinstance(item, dict) else None
            qs = item.get("questions", [item.get("question")]) if isinstance(item, dict) else None
            if chunk not in wanted or not isinstance(qs, list) or not all(isinstance(q, str) for q in qs):
                raise InputError('expected {"chunk": <an id it was given>, "question": "..."}', "--command",
                                 f"stdout line {n}")
            out.setdefault(chunk, []).extend(mend_surrogates(q) for q in qs if q.strip())
        return out


class Cache:
    """Answers kept by what was asked (the generator, and the prompt or chunk), one JSON line
    each, appended as they arrive: a run stopped half-way keeps what it paid for."""

    def __init__(self, path: str | None):
        self.path = path
        self.known: dict[str, list[str]] = {}
        if path:
            try:
                with open(path, encoding="utf-8") as fh:
                    for line in fh:
                        try:
                            item = json.loads(line)
                            # mended: a lone surrogate kept by an earlier version must not stop every re-run
                            self.known[item["key"]] = [mend_surrogates(q) for q in item["questions"]]
                        except (ValueError, KeyError, TypeError, RecursionError):
                            continue  # a line cut by a crash: that answer is asked again
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise InputError(f"cannot read the cache: {exc.strerror}", path) from None

    @staticmethod
    def key(identity: str, asked: str) -> str:
        return hashlib.sha256(json.dumps([identity, asked]).encode("utf-8")).hexdigest()

    def get(self, key: str) -> list[str] | None:
        return self.known.get(key)

    def put(self, key: str, questions: list[str]) -> None:
        self.known[key] = questions
        if self.path:
            atomic_append(self.path, json.dumps({"key": key, "questions": questions}) + "\n")
