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


def read_log(path: str, fmt: str, field: str = "question") -> QuestionLog:
    text = decode(read_bytes(path, "question log"), path)
    questions: list[str] = []
    skipped: list[int] = []
    if fmt == "text":
        questions = [line.strip() for line in text.split("\n") if line.strip()]
    elif fmt == "openinference":
        from ci_eval.retrieval.openinference import asked_questions

        questions = [q for _, q in asked_questions(text, path)]
    else:
        for n, value in json_lines(text, path):
            if isinstance(value, InputError):
                raise value
            question = _at(value, field)
            if isinstance(question, str) and question.strip():
                questions.append(question)
            else:
                skipped.append(n)
    # "\ud83d" alone (a logger cut an emoji in two) parses as JSON but is no character: the
    # question is kept with U+FFFD in its place, so it can be written out
    mended = [mend_surrogates(q) for q in questions]
    count = sum(a is not b for a, b in zip(mended, questions))
    questions = mended
    for q in questions:
        if len(q) > MAX_QUESTION_CHARS:
            raise InputError(f"a question longer than {MAX_QUESTION_CHARS} characters: {q[:40]!r}...", path)
    if not questions:
        where = f' (no line has a string under "{field}")' if fmt == "jsonl" else ""
        raise InputError(f"no questions found{where}", path)
    return QuestionLog(questions, skipped, count)
