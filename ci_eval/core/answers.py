"""End-to-end answer verdicts joined to the gold set: the failure matrix's second axis.

A team already grades its answers with an end-to-end tool (promptfoo, DeepEval, Ragas) or a
script of its own. ``inputs/answers.py`` reads each tool's real result file into
``AnswerRow`` values; this module decides, with no I/O, which gold question each row is
about and whether it counts as correct:

- **Matching.** A row that carries an id (promptfoo's ``vars.id`` or ``metadata.id``,
  DeepEval's ``additional_metadata``, an ``id`` column: ``id_field`` names the key) is matched
  by that id, and only by it: an id the gold set does not hold is *unmatched*, never guessed
  from the text. A row without an id is matched by its question text, exactly as written;
  text that two gold questions share is *ambiguous* and the row is left out. Each kind is
  counted and the first one named.
- **Correct.** With ``threshold`` set, a score at or above it (the score is the metric
  ``metric`` names, else the tool's overall score); without it, the tool's own pass.
  A row the tool could not judge (a provider error, a NaN score) gives no verdict.
- **Missing is not wrong.** A gold question no row answers has no verdict: it is counted
  aloud and kept out of the matrix, never filled in.
- **Repeats.** A question answered by several rows (promptfoo's ``repeat``, several prompts,
  a re-run appended to the file) follows ``repeats``: ``"all"`` (the default; correct only
  when every verdict is, so a flaky answer is not a correct one), ``"majority"`` (more than
  half; a tie is wrong) or ``"any"``. Questions whose verdicts disagreed are counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ci_eval.core.textfmt import plural

TYPES = ("jsonl", "promptfoo", "deepeval", "ragas", "command")
REPEATS = ("all", "majority", "any")
TOOL_NAMES = {"jsonl": "answers file", "promptfoo": "promptfoo results", "deepeval": "DeepEval test run",
              "ragas": "Ragas results", "command": "answers command",
              "stand-in": "the demo's stand-in judge (ci_eval.demo.answerer), not a real model"}


@dataclass(frozen=True)
class AnswerRow:
    """One graded answer as its tool wrote it, before it is matched to a question."""

    place: str  # where it sits in its source: "line 3", "results[4]", "testCases[2]", "row 7"
    id: str | None  # the id the row carries (None: none given)
    question: str | None  # the question text as the tool saw it
    passed: bool | None  # the tool's own pass (None: it has none)
    score: float | None = None  # the score a threshold reads (None: absent or not a number)
    error: str | None = None  # the tool could not judge this answer: no verdict


@dataclass(frozen=True)
class AnswersSpec:
    """The config's ``[answers]`` table (``answers = "file.jsonl"`` is ``type = "jsonl"``)."""

    type: str = "jsonl"
    path: str | None = None  # resolved against the config's folder
    path_as_written: str | None = None
    command: tuple[str, ...] = ()
    id_field: str = "id"
    question_field: str | None = None  # None: the tool's usual name (question_key)
    metric: str | None = None
    threshold: float | None = None
    repeats: str = "all"
    provider: str | None = None  # promptfoo: only this provider's results
    timeout: float = 600.0  # command: seconds before it is stopped

    @property
    def question_key(self) -> str:
        defaults = {"promptfoo": "question", "deepeval": "input", "ragas": "user_input"}
        return self.question_field or defaults.get(self.type, "question")

    def correct_rule(self) -> str:
        """What counts as correct, in words (the comment's source line, the artefact)."""
        if self.threshold is not None:
            return f"{self.metric or 'score'} ≥ {self.threshold:g}"
        if self.metric:
            return f"{self.metric} passed"
        return '"correct": true' if self.type in ("jsonl", "command") else "a pass"

    def verdict(self, row: AnswerRow) -> bool | None:
        if row.error is not None:
            return None
        if self.threshold is not None:
            return None if row.score is None else row.score >= self.threshold
        return row.passed

    def as_recorded(self) -> dict:
        """The settings as the artefact's config records them (a change shows in the diff)."""
        out: dict = {"type": self.type}
        if self.type == "command":
            out["command"] = list(self.command)
        else:
            out["path"] = self.path_as_written
        for key in ("id_field", "question_field", "metric", "threshold", "provider"):
            if getattr(self, key) is not None and not (key == "id_field" and self.id_field == "id"):
                out[key] = getattr(self, key)
        if self.repeats != "all":
            out["repeats"] = self.repeats
        return out


@dataclass(frozen=True)
class Tally:
    """How many rows (or questions) of one kind, and the first, named."""

    count: int = 0
    first: str | None = None

    def add(self, what: str) -> Tally:
        # The first is named in the artefact and the comment: an id from a tool's file may be
        # any length, so the name is cut (the artefact's schema holds it to 2,000 characters).
        return Tally(self.count + 1, self.first if self.count else _short(what, 500))

    def record(self) -> dict:
        return {"count": self.count, "first": self.first}


@dataclass(frozen=True)
class Matched:
    """The verdicts by gold id, and what the join could not use."""

    verdicts: dict  # gold id -> correct (only the questions some row answered)
    rows: int
    unmatched: Tally
    ambiguous: Tally
    no_verdict: Tally  # rows matched to a question the tool could not judge
    missing: Tally  # gold questions no row gave a verdict for
    repeated: int  # questions answered by more than one row
    disagreeing: int  # of those, the ones whose verdicts differed
    questions: int  # the gold set's size

    def record(self, source: dict) -> dict:
        """The artefact's ``answers`` key: where the verdicts came from and how they joined."""
        return {**source, "rows": self.rows, "matched": len(self.verdicts), "questions": self.questions,
                "unmatched": self.unmatched.record(), "ambiguous": self.ambiguous.record(),
                "no_verdict": self.no_verdict.record(), "missing": self.missing.record(),
                "repeated": {"questions": self.repeated, "disagreeing": self.disagreeing}}


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _resolve(row: AnswerRow, known: set, by_text: dict) -> tuple[str | None, str | None, str | None]:
    """(gold id, why unmatched, why ambiguous) for one row."""
    if row.id is not None:
        if row.id in known:
            return row.id, None, None
        return None, f"{row.place}: id {_short(row.id, 120)!r} is not in the gold set", None
    if row.question is None:
        return None, f"{row.place}: no id and no question text", None
    ids = by_text.get(row.question, ())
    if len(ids) == 1:
        return ids[0], None, None
    if not ids:
        return None, f"{row.place}: no gold question reads {_short(row.question)!r}", None
    return None, None, f"{row.place}: {_short(row.question)!r} is the text of {', '.join(ids[:3])}" + (
        f" and {len(ids) - 3} more" if len(ids) > 3 else "")


def _decide(votes: list[bool], rule: str) -> bool:
    if rule == "any":
        return any(votes)
    if rule == "majority":
        return 2 * sum(votes) > len(votes)
    return all(votes)


def match_answers(rows: Iterable[AnswerRow], questions: Sequence[tuple[str, str]], spec: AnswersSpec) -> Matched:
    """Each row joined to a gold question of ``questions`` ((id, text) pairs, gold-set order)
    and turned into a verdict by ``spec``; the module's docstring says how."""
    known = {qid for qid, _ in questions}
    by_text: dict[str, list[str]] = {}
    for qid, text in questions:
        by_text.setdefault(text, []).append(qid)
    votes: dict[str, list[bool]] = {}
    unmatched, ambiguous, no_verdict = Tally(), Tally(), Tally()
    count = 0
    for row in rows:
        count += 1
        qid, why_not, why_ambiguous = _resolve(row, known, by_text)
        if why_not is not None:
            unmatched = unmatched.add(why_not)
            continue
        if why_ambiguous is not None:
            ambiguous = ambiguous.add(why_ambiguous)
            continue
        verdict = spec.verdict(row)
        if verdict is None:
            no_verdict = no_verdict.add(f"{row.place}: {row.error or 'no verdict'} ({qid})")
            continue
        votes.setdefault(qid, []).append(verdict)
    verdicts = {qid: _decide(v, spec.repeats) for qid, v in votes.items()}
    missing = Tally()
    for qid, _ in questions:
        if qid not in verdicts:
            missing = missing.add(qid)
    repeated = sum(1 for v in votes.values() if len(v) > 1)
    disagreeing = sum(1 for v in votes.values() if len(set(v)) > 1)
    return Matched(verdicts, count, unmatched, ambiguous, no_verdict, missing, repeated, disagreeing,
                   len(questions))


def join_lines(record: dict) -> list[str]:
    """What the join could not use, one sentence each (the terminal's warnings, the comment).
    ``record`` may come from a stored artefact: a key it lacks counts as none."""
    def tally(key: str) -> tuple[int, object]:
        value = record.get(key) if isinstance(record.get(key), dict) else {}
        return int(value.get("count") or 0), value.get("first")

    out = []
    count, first = tally("missing")
    if count:
        out.append(f"{plural(count, 'gold question')} not covered by the end-to-end run "
                   f"(first: {first}), kept out of the failure matrix")
    for key, what in (("unmatched", "matched no gold question"), ("ambiguous", "matched several gold questions"),
                      ("no_verdict", "had no verdict")):
        count, first = tally(key)
        if count:
            out.append(f"{plural(count, 'result')} {what} (first: {first})")
    rep = record.get("repeated") if isinstance(record.get("repeated"), dict) else {}
    if rep.get("questions"):
        out.append(f"{plural(rep['questions'], 'question')} answered more than once, "
                   f"{rep.get('disagreeing', 0)} with verdicts that disagree "
                   f"(repeats = \"{record.get('repeats', 'all')}\")")
    return out


def summary_lines(record: dict) -> list[str]:
    """The terminal's account of the join: coverage, then what was left out."""
    view = source_view(record)
    return [f"answers: {view.matched} of {view.questions} gold questions have a verdict "
            f"({view.rule or 'the stand-in'}) from {source_text(record)}",
            *(f"answers: {line}" for line in join_lines(record))]


@dataclass(frozen=True)
class SourceView:
    """A recorded ``answers`` value read for the comment: each piece as it is, to escape."""

    tool: str  # in words: "promptfoo results"
    where: str | None  # the file, or the command as one line (None: neither, the demo)
    commit: str | None  # the file's last commit
    changed: bool  # the file differs from it (untracked, modified)
    rule: str | None  # what counts as correct (None: the demo's stand-in)
    matched: int
    questions: int


def source_view(record: dict) -> SourceView:
    kind = str(record.get("type", "jsonl"))
    if kind == "command":
        where = " ".join(map(str, record.get("command") or ())) or None
    else:
        where = record.get("path") if isinstance(record.get("path"), str) else None
    commit = record.get("commit") if isinstance(record.get("commit"), str) else None
    return SourceView(TOOL_NAMES.get(kind, kind), where, commit, bool(record.get("changed")),
                      None if kind == "stand-in" else str(record.get("counts_as_correct", "a pass")),
                      int(record.get("matched") or 0), int(record.get("questions") or 0))


def source_text(record: dict) -> str:
    """Where the verdicts came from, in words: tool, file or command, commit."""
    view = source_view(record)
    if view.changed:
        at = "not committed (written in this job or changed locally)"
    elif view.commit:
        at = f"last committed in {view.commit[:7]}"
    else:
        at = "" if record.get("type") == "command" else "not in git"
    return " ".join(filter(None, (view.tool, view.where))) + (f", {at}" if at and view.where else "")
