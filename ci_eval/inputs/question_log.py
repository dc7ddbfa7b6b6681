"""The questions users asked, read from a log: plain text, JSON lines, or traces.

- ``text``: one question a line (blank lines skipped);
- ``jsonl``: one JSON object a line, the question under ``field`` (a dotted path such as
  ``request.query`` reaches into nested objects); a line without a string there is another
  kind of event and is counted as skipped, not an error;
- ``openinference``: OpenInference/OTLP traces, the ``input.value`` of every retrieval span
  (the reader ``run-file`` uses).
A line that is not JSON in a JSON format is an error naming the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_eval.core.limits import MAX_QUESTION_CHARS
from ci_eval.core.text import mend_surrogates
from ci_eval.errors import InputError
from ci_eval.inputs.files import decode, json_lines, read_bytes

FORMATS = ("text", "jsonl", "openinference")


@dataclass(frozen=True)
class QuestionLog:
    questions: list[str]
    skipped: list[int]  # line numbers of JSON lines without a question under the field
    mended: int = 0  # questions holding a lone surrogate, mended to U+FFFD
    bad: tuple[tuple[str, str], ...] = ()  # (place, why) of each bad line skipped


def guess_format(path: str, field: str | None) -> str:
    if field is not None or Path(path).suffix.lower() in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    return "text"


def _at(value, field: str):
    for part in field.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _decoded_lines(raw: bytes, path: str, strict: bool) -> tuple[str, list[tuple[str, str]]]:
    """The log as text, a line that is not UTF-8 left blank (so every other line keeps its
    number) and listed as bad; with ``strict`` it is an error naming the line, as before."""
    if strict:
        return decode(raw, path), []
    lines, bad = raw.split(b"\n"), []
    for n, line in enumerate(lines):
        try:
            lines[n] = line.decode("utf-8")
        except UnicodeDecodeError:
            bad.append((f"line {n + 1}", "not valid UTF-8"))
            lines[n] = ""
    text = "\n".join(lines)
    return (text[1:] if text.startswith("\ufeff") else text), bad


def read_log(path: str, fmt: str, field: str = "question", strict: bool = False) -> QuestionLog:
    """The log's questions. A bad line (not UTF-8, or a question over MAX_QUESTION_CHARS
    characters) is skipped and listed, or, with ``strict``, an error naming it."""
    text, bad = _decoded_lines(read_bytes(path, "question log"), path, strict)
    asked: list[tuple[str, str]] = []  # (place, question)
    skipped: list[int] = []
    if fmt == "text":
        asked = [(f"line {n}", line.strip()) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    elif fmt == "openinference":
        from ci_eval.retrieval.openinference import asked_questions

        asked = [(f"question {n}", q) for n, (_, q) in enumerate(asked_questions(text, path), 1)]
    else:
        for n, value in json_lines(text, path):
            if isinstance(value, InputError):
                raise value
            question = _at(value, field)
            if isinstance(question, str) and question.strip():
                asked.append((f"line {n}", question))
            else:
                skipped.append(n)
    # "\ud83d" alone (a logger cut an emoji in two) parses as JSON but is no character: the
    # question is kept with U+FFFD in its place, so it can be written out
    questions, count = [], 0
    for place, q in asked:
        if len(q) > MAX_QUESTION_CHARS:
            if strict:
                raise InputError(f"a question longer than {MAX_QUESTION_CHARS} characters: {q[:40]!r}...", path, place)
            bad.append((place, f"a question over {MAX_QUESTION_CHARS:,} characters"))
            continue
        mended = mend_surrogates(q)
        count += mended is not q
        questions.append(mended)
    if not questions:
        where = f' (no line has a string under "{field}")' if fmt == "jsonl" else ""
        raise InputError(f"no questions found{where}", path)
    bad.sort(key=lambda b: int(b[0].split()[-1]))  # the first named is the first in the file
    return QuestionLog(questions, skipped, count, tuple(bad))
