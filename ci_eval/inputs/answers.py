"""The end-to-end tools' result files (and a team's command) -> ``core.answers.AnswerRow``.

One reader per ``[answers] type``, each over the file its tool really writes:

- ``jsonl``: ``{"id" or "question", "correct": true|false}`` a line (``"score"`` with a
  threshold), the format a team's own script prints; ``command`` runs that script and reads
  its standard output the same way.
- ``promptfoo``: ``promptfoo eval -o results.json``; each entry of ``results.results`` is one
  test x prompt x provider, with the test's ``vars``, ``metadata``, ``success``, ``score`` and
  ``namedScores``; ``failureReason`` 2 is a provider error (no verdict).
- ``deepeval``: a saved test run (``DEEPEVAL_RESULTS_FOLDER``: ``test_run_*.json``, the
  newest when ``path`` is that folder); each of ``testCases`` has ``input``, ``success``,
  ``metadata`` (the case's ``additional_metadata``) and ``metricsData``.
- ``ragas``: ``evaluate(...).to_pandas()`` saved as CSV, JSON lines or a JSON array of
  records; a row per sample, a column per metric.

Every reader says what is wrong with the file at its place, all problems at once (exit 2);
what it cannot join is not a problem of the file and is counted by ``core/answers.py``.
"""

from __future__ import annotations

import math
import os
import subprocess

from ci_eval.core.answers import AnswerRow, AnswersSpec
from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs.files import decode, json_lines, parse_json, read_bytes


def _text(value) -> str | None:
    """An id or question as text: ids may be written as numbers (``id: 7`` in YAML)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _jsonl_rows(text: str, source: str, spec: AnswersSpec, place_word: str = "line") -> list[AnswerRow]:
    rows, problems = [], []
    for n, row in json_lines(text, source):
        if isinstance(row, InputError):
            problems.append(row)
            continue
        place = f"{place_word} {n}"
        if not isinstance(row, dict) or (_text(row.get(spec.id_field)) is None
                                         and not isinstance(row.get(spec.question_key), str)):
            problems.append(InputError(f'expected an object with a string "{spec.id_field}" '
                                       f'(or "{spec.question_key}")', source, place))
            continue
        if spec.threshold is not None:
            score = row.get(spec.metric or "score")
            if score is not None and _number(score) is None:
                problems.append(InputError(f'"{spec.metric or "score"}" must be a number', source, place))
                continue
        elif not isinstance(row.get("correct"), bool):
            problems.append(InputError('"correct" must be true or false', source, place))
            continue
        rows.append(AnswerRow(place, _first_text(spec, row), row.get(spec.question_key)
                              if isinstance(row.get(spec.question_key), str) else None,
                              row.get("correct") if isinstance(row.get("correct"), bool) else None,
                              _number(row.get(spec.metric or "score"))))
    if problems:
        raise InputErrors(problems)
    return rows


def _document(path: str, what: str):
    raw = read_bytes(path, what)
    return parse_json(decode(raw, path), path)


def _first_text(spec: AnswersSpec, *tables) -> str | None:
    """The first id among ``tables``; an empty one (a table's blank cell) is no id."""
    for table in tables:
        if isinstance(table, dict) and _text(table.get(spec.id_field)):
            return _text(table.get(spec.id_field))
    return None


def _promptfoo_rows(path: str, spec: AnswersSpec) -> list[AnswerRow]:
    data = _document(path, "promptfoo results file")
    results = data.get("results") if isinstance(data, dict) else None
    entries = results.get("results") if isinstance(results, dict) else None
    if not isinstance(entries, list):
        raise InputError('expected promptfoo\'s output ("promptfoo eval -o results.json"): an object whose '
                         '"results" holds a "results" list', path, "results.results")
    rows = []
    for i, entry in enumerate(entries):
        place = f"results.results[{i}]"
        if not isinstance(entry, dict):
            raise InputError("expected an object (one test's result)", path, place)
        provider = entry.get("provider") if isinstance(entry.get("provider"), dict) else {}
        if spec.provider is not None and spec.provider not in (provider.get("id"), provider.get("label")):
            continue
        case = entry.get("testCase") if isinstance(entry.get("testCase"), dict) else {}
        variables = entry.get("vars") if isinstance(entry.get("vars"), dict) else case.get("vars")
        qid = _first_text(spec, variables, case.get("metadata"), entry.get("metadata"))
        question = variables.get(spec.question_key) if isinstance(variables, dict) else None
        named = entry.get("namedScores") if isinstance(entry.get("namedScores"), dict) else {}
        score = _number(named.get(spec.metric)) if spec.metric else _number(entry.get("score"))
        # failureReason 2 is promptfoo's ERROR (the provider failed): no answer was graded.
        error = (entry.get("error") or "provider error") if entry.get("failureReason") == 2 else None
        passed = entry.get("success") if isinstance(entry.get("success"), bool) else None
        rows.append(AnswerRow(place, qid, question if isinstance(question, str) else None, passed, score,
                              None if error is None else str(error)))
    return rows


def _deepeval_file(path: str) -> str:
    """``path``, or the newest saved test run in it when it is DeepEval's results folder."""
    if not os.path.isdir(path):
        return path
    runs = sorted(n for n in os.listdir(path) if n.startswith("test_run_") and n.endswith(".json"))
    if not runs:
        raise InputError("holds no DeepEval test run (test_run_*.json)", path)
    return os.path.join(path, runs[-1])  # named by their start time: the last is the newest


def _deepeval_rows(path: str, spec: AnswersSpec) -> list[AnswerRow]:
    path = _deepeval_file(path)
    data = _document(path, "DeepEval test run")
    cases = data.get("testCases") if isinstance(data, dict) else None
    if not isinstance(cases, list):
        raise InputError('expected a DeepEval test run: an object with a "testCases" list', path, "testCases")
    rows = []
    for i, case in enumerate(cases):
        place = f"testCases[{i}]"
        if not isinstance(case, dict):
            raise InputError("expected an object (one test case)", path, place)
        qid = _first_text(spec, case.get("metadata"), case.get("additionalMetadata"))
        question = case.get(spec.question_key)
        passed = case.get("success") if isinstance(case.get("success"), bool) else None
        score, error = None, None
        if spec.metric:
            found = [m for m in case.get("metricsData") or () if isinstance(m, dict) and m.get("name") == spec.metric]
            if not found:
                error = f"no metric named {spec.metric!r}"
            else:
                metric = found[0]
                passed = metric.get("success") if isinstance(metric.get("success"), bool) else None
                score, error = _number(metric.get("score")), metric.get("error") or None
        rows.append(AnswerRow(place, qid, question if isinstance(question, str) else None, passed, score,
                              None if error is None else str(error)))
    return rows


def _ragas_records(path: str):
    """(place, record) for each sample of a saved Ragas result table."""
    import csv
    import io

    lower = path.lower()
    if lower.endswith(".csv"):
        text = decode(read_bytes(path, "Ragas results file"), path)
        try:
            table = list(csv.DictReader(io.StringIO(text, newline="")))
        except csv.Error as exc:
            raise InputError(f"not a readable CSV file: {exc}", path) from None
        return [(f"row {i + 2}", record) for i, record in enumerate(table)]  # row 1 is the header
    if lower.endswith(".jsonl"):
        out, problems = [], []
        for n, record in json_lines(decode(read_bytes(path, "Ragas results file"), path), path):
            (problems if isinstance(record, InputError) else out).append(
                record if isinstance(record, InputError) else (f"line {n}", record))
        if problems:
            raise InputErrors(problems)
        return out
    data = _document(path, "Ragas results file")
    if not isinstance(data, list):
        raise InputError('expected a list of records (to_pandas().to_json(orient="records")), a .jsonl or '
                         'a .csv file', path, "(top level)")
    return [(f"[{i}]", record) for i, record in enumerate(data)]


def _ragas_rows(path: str, spec: AnswersSpec) -> list[AnswerRow]:
    rows, problems = [], []
    for place, record in _ragas_records(path):
        if not isinstance(record, dict):
            problems.append(InputError("expected an object (one sample)", path, place))
            continue
        if spec.metric not in record:
            have = ", ".join(map(str, record)) or "none"
            problems.append(InputError(f"no column {spec.metric!r} (the metric [answers] names); columns: {have}",
                                       path, place))
            break
        raw = record.get(spec.metric)
        try:
            score = _number(float(raw)) if isinstance(raw, str) and raw.strip() else _number(raw)
        except ValueError:
            problems.append(InputError(f"{spec.metric!r} is not a number: {raw!r}", path, place))
            continue
        question = record.get(spec.question_key)
        rows.append(AnswerRow(place, _first_text(spec, record), question if isinstance(question, str) else None,
                              None, score, None if score is not None else "the score is not a number"))
    if problems:
        raise InputErrors(problems)
    return rows


def _command_rows(spec: AnswersSpec, base_dir: str, source: str) -> list[AnswerRow]:
    """The team's script run as every child of ci-eval is (its environment without the
    token or the action's inputs, in the config's folder), its stdout read as JSON lines."""
    from ci_eval.github.env import without_secrets

    shown = " ".join(spec.command)
    try:
        done = subprocess.run(list(spec.command), cwd=base_dir or None, env=without_secrets(os.environ),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=spec.timeout, check=False)
    except FileNotFoundError:
        raise InputError(f"answers command not found: {spec.command[0]!r}", source, "answers.command") from None
    except PermissionError:
        raise InputError(f"answers command is not executable: {spec.command[0]!r}", source,
                         "answers.command") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"answers command {shown!r} did not finish within {spec.timeout:g} s", source,
                         "answers.command") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(f"answers command {shown!r} exited with code {done.returncode}"
                         + (f": {said[-1][:300]}" if said else ""), source, "answers.command")
    return _jsonl_rows(decode(done.stdout, f"answers command {shown!r}"), f"answers command {shown!r}", spec,
                       "output line")


def read_answer_rows(spec: AnswersSpec, base_dir: str = "", source: str = "config") -> list[AnswerRow]:
    """Every graded answer ``spec`` points at, as rows to match."""
    if spec.type == "command":
        return _command_rows(spec, base_dir, source)
    path = str(spec.path)
    if spec.type == "promptfoo":
        return _promptfoo_rows(path, spec)
    if spec.type == "deepeval":
        return _deepeval_rows(path, spec)
    if spec.type == "ragas":
        return _ragas_rows(path, spec)
    return _jsonl_rows(decode(read_bytes(path, "answers file"), path), path, spec)


def load_answers(spec: AnswersSpec, questions, base_dir: str = "", source: str = "config"):
    """``(verdicts, record)``: the verdicts by gold id and the artefact's ``answers`` key
    (where they came from, commit included, and what the join could not use)."""
    from ci_eval.core.answers import match_answers
    from ci_eval.inputs.gitinfo import file_commit

    matched = match_answers(read_answer_rows(spec, base_dir, source), [(q.id, q.question) for q in questions], spec)
    where = spec.as_recorded()
    if spec.type != "command":
        where.update(file_commit(str(spec.path)))
    where["counts_as_correct"] = spec.correct_rule()[:500]
    where["repeats"] = spec.repeats
    return matched.verdicts, matched.record(where)
