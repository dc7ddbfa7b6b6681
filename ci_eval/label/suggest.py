"""A judge that suggests a grade for each pooled chunk, asked in the background while a person
labels. The judge is one of the kinds `ci-eval gold generate` talks to: an OpenAI-compatible
chat-completions endpoint (ChatEndpoint: retries with backoff, Retry-After, the request
budget) or the user's command reading JSON lines on stdin.

A suggestion is only ever shown: the gold set gets a grade when a person presses a key (Enter
takes the suggestion as their grade, a digit gives their own). A judge that fails stops
asking and says why in one line; the page goes on without suggestions."""

from __future__ import annotations

import json
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ci_eval.core.gold.judgement import MAX_GRADE
from ci_eval.errors import InputError
from ci_eval.gold.generators import Budget, BudgetSpent, ChatEndpoint, CommandGenerator

PROMPT_FILE = "suggest-prompt.txt"  # shipped beside the page's files (ci_eval/label/static)


def default_prompt() -> str:
    from importlib import resources

    return resources.files("ci_eval.label").joinpath("static", PROMPT_FILE).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Item:
    """One chunk of one question to suggest a grade for."""
    question_id: str
    question: str
    chunk: str
    text: str


def parse_grade(content: str) -> int:
    """The grade in a model's answer: ``{"grade": N}`` (inside a code fence or after some
    words, as local models write it), or the answer being a lone digit."""
    text = content.strip().strip("`").strip()
    if text.isdigit():
        value: object = int(text)
    else:
        start = text.find("{")
        if start < 0:
            raise InputError(f'expected {{"grade": 0 to {MAX_GRADE}}}, the answer holds no JSON object')
        try:
            found, _ = json.JSONDecoder().raw_decode(text[start:])
        except ValueError as exc:
            raise InputError(f"the answer's JSON does not parse ({exc})") from None
        except RecursionError:
            raise InputError("the answer's JSON is nested too deeply") from None
        value = found.get("grade") if isinstance(found, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_GRADE:
        raise InputError(f'expected {{"grade": 0 to {MAX_GRADE}}}, got {" ".join(content.split())[:80]!r}')
    return value


def fill(template: str, item: Item) -> str:
    # str.replace, not str.format: the template's JSON example holds braces of its own.
    return (template.replace("{max_grade}", str(MAX_GRADE)).replace("{question}", item.question)
            .replace("{text}", item.text))


class EndpointJudge:
    """One chat completion per chunk, through `ci-eval gold generate`'s client."""

    def __init__(self, endpoint: ChatEndpoint, template: str, max_requests: int):
        self.endpoint, self.template, self.budget = endpoint, template, Budget(max_requests)
        self.identity = endpoint.identity

    def grades(self, items: Sequence[Item], found: Callable[[Item, int], None]) -> None:
        """Each answer is handed to ``found`` as it arrives, so the page shows it at once."""
        for item in items:
            content = self.endpoint.ask(fill(self.template, item), self.budget)
            try:
                grade = parse_grade(content)
            except InputError as exc:
                raise InputError(f"the model's answer for chunk {item.chunk!r} of {item.question_id!r}: "
                                 f"{exc.message}", self.endpoint.url) from None
            found(item, grade)


class CommandJudge(CommandGenerator):
    """The user's command, run once per question: one ``{"question_id", "question", "chunk",
    "text", "max_grade"}`` a line on stdin; ``{"chunk": id, "grade": N}`` a line on stdout
    (chunks it leaves out get no suggestion)."""

    def grades(self, items: Sequence[Item], found: Callable[[Item, int], None]) -> None:
        lines = [{"question_id": i.question_id, "question": i.question, "chunk": i.chunk, "text": i.text,
                  "max_grade": MAX_GRADE} for i in items]
        wanted = {i.chunk for i in items}
        out: dict[str, int] = {}
        for n, item in self.exchange(lines, "the judge command", "--suggest-command"):
            chunk = item.get("chunk") if isinstance(item, dict) else None
            grade = item.get("grade") if isinstance(item, dict) else None
            if (chunk not in wanted or isinstance(grade, bool) or not isinstance(grade, int)
                    or not 0 <= grade <= MAX_GRADE):
                raise InputError(f'expected {{"chunk": <an id it was given>, "grade": 0 to {MAX_GRADE}}}',
                                 "--suggest-command", f"stdout line {n}")
            out[chunk] = grade
        for i in items:
            if i.chunk in out:
                found(i, out[i.chunk])


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _why(exc: InputError) -> str:
    """An input error as the page's line: its place and message, and its source unless that
    is a flag (the client's errors name `gold generate`'s --endpoint, not label's)."""
    where = [p for p in (exc.source, exc.place) if p and not p.startswith("--")]
    return _one_line(InputError(exc.message, *where) if where else exc.message)


def log_line(line: str) -> None:
    """`ci-eval label`'s line on stderr (the server's and the suggester's): one write, newline
    included, as this thread logs while the server's threads do."""
    sys.stderr.write(f"ci-eval label: {line}\n")
    sys.stderr.flush()


class Suggester:
    """Asks the judge in a background thread, a question's pool at a time in the order the
    page walks them, and keeps every answer in memory by (question, chunk), so each is
    asked once. ``since(version)`` gives what arrived after ``version``, for the page."""

    def __init__(self, judge, *, log: Callable[[str], None] | None = None):
        self.judge = judge
        self.identity: str = judge.identity
        self._log = log or log_line
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str], int] = {}
        self._arrived: list[tuple[str, str, int]] = []  # in arrival order: version = its length
        self._asked = 0  # chunks sent to the judge so far
        self._wanted = 0  # chunks handed to the suggester
        self.problem: str | None = None
        self.stopped = False  # the request budget ran out
        self._work: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None

    def ask(self, items: Sequence[Item]) -> None:
        """Queue one question's chunks (those not known already)."""
        with self._lock:
            todo = [i for i in items if (i.question_id, i.chunk) not in self._known]
            if not todo or self.problem is not None or self.stopped:
                return
            self._wanted += len(todo)
            self._work.put(list(todo))
            # under the lock: two pages asking at once start one asker, not two
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ci-eval-suggest", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            items = self._work.get()
            try:
                self.judge.grades(items, self._found)
            except BudgetSpent:
                with self._lock:
                    self.stopped = True
                self._log("suggestions stopped: the judge's request budget (--suggest-max-requests) is spent")
                return
            except InputError as exc:
                self._fail(_why(exc))
                return
            except Exception as exc:  # noqa: BLE001 - a judge's failure must never reach the person's work
                self._fail(f"the judge failed: {type(exc).__name__}: {_one_line(exc)}")
                return
            with self._lock:
                self._asked += len(items)
            self._work.task_done()

    def _found(self, item: Item, grade: int) -> None:
        key = (item.question_id, item.chunk)
        with self._lock:
            if key not in self._known:
                self._known[key] = grade
                self._arrived.append((item.question_id, item.chunk, grade))

    def _fail(self, why: str) -> None:
        with self._lock:
            self.problem = why
        self._log(f"no suggestions: {why}")

    def get(self, qid: str, chunk: str) -> int | None:
        with self._lock:
            return self._known.get((qid, chunk))

    def known(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._known)

    def _status(self) -> dict:  # with the lock held
        if self.problem is not None:
            state = "failed"
        elif self.stopped:
            state = "stopped"
        elif self._asked < self._wanted:
            state = "running"
        else:
            state = "done"
        return {"judge": self.identity, "state": state, "problem": self.problem, "asked": self._asked,
                "wanted": self._wanted, "version": len(self._arrived)}

    def status(self) -> dict:
        with self._lock:
            return self._status()

    def snapshot(self) -> tuple[dict[tuple[str, str], int], dict]:
        """Every suggestion and the status, taken together: the page's state, whose
        ``version`` the page then polls from, misses nothing and repeats nothing."""
        with self._lock:
            return dict(self._known), self._status()

    def since(self, version: int) -> dict:
        with self._lock:
            fresh = [list(t) for t in self._arrived[max(0, version):]]
            return {**self._status(), "suggestions": fresh}

    def wait(self, timeout: float = 30.0) -> None:
        """For tests and benchmarks: until the queue is worked through or the judge failed."""
        import time

        end = time.monotonic() + timeout
        while time.monotonic() < end and self.status()["state"] == "running":
            time.sleep(0.02)
