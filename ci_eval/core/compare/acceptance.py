"""What a pull request lost question by question, and which of those losses a person
accepted: the per-question rules of the gate (``gate.py``: ``lost_gold``, ``max_rank_drop``)
and the acceptance file `ci-eval accept` writes (``eval/accepted.toml`` by default).

A loss is a fact of this comparison, not an estimate: the question, the gold chunk that was
the base's first within reach, its rank on the base and on the head. An acceptance names
that same loss and why it was meant. It covers exactly that loss: the same question losing
another chunk, or the same chunk falling elsewhere, is a new loss a person has not seen, so
it is not covered (as a snapshot tool shows a changed snapshot again).

A question is excused as flapping only on the base's word: the base run's ``--repeat``
record (its outcome changed between identical passes) or the base branch's recent runs
(``recent_runs.py``: its state changed often enough to count as flapping). The head's own
records are never read for this: in a fork's pull request the head artefact is the fork's,
and a record claiming every question flaps would turn the rule off.

No I/O here: the acceptance file's text is parsed from an already-read TOML document
(``parse_acceptances``) and written as text (``acceptances_toml``); ``inputs/`` reads and
writes the file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ci_eval.errors import InputError, InputErrors

if TYPE_CHECKING:  # `check` reads the acceptance file without numpy, which recent_runs brings
    from ci_eval.core.compare.recent_runs import RecentRuns

# The pull request label meaning "this PR's retrieval changes are intended": every
# per-question loss counts as accepted. Read from the pull request as GitHub reports it
# (the event payload, or the API in the workflow_run poster), never from an artefact.
ACCEPT_LABEL = "retrieval-change-intended"
MAX_REASON = 500  # characters: a reason is a sentence, not a document


@dataclass(frozen=True)
class Loss:
    """One question's loss on this PR. ``kind``: ``lost`` (no gold chunk in the top k any
    more) or ``fell`` (the first gold rank fell by more than ``max_rank_drop`` places).
    ``chunk`` is the gold chunk at the base's first gold rank, ``head_rank`` where that chunk
    is on the head (None: not in the head's ranking)."""

    question: str
    chunk: str
    base_rank: int
    head_rank: int | None
    kind: str = "lost"

    @property
    def key(self) -> tuple:
        return (self.question, self.chunk, self.base_rank, self.head_rank)

    def as_dict(self) -> dict:
        return {"question": self.question, "chunk": self.chunk, "base_rank": self.base_rank,
                "head_rank": self.head_rank, "kind": self.kind}


@dataclass(frozen=True)
class Acceptance:
    """One committed acceptance: the loss it covers and why it was meant."""

    question: str
    chunk: str
    base_rank: int
    head_rank: int | None
    reason: str

    @property
    def key(self) -> tuple:
        return (self.question, self.chunk, self.base_rank, self.head_rank)

    def covers(self, loss: Loss) -> bool:
        return self.key == loss.key

    def as_dict(self) -> dict:
        return {"question": self.question, "chunk": self.chunk, "base_rank": self.base_rank,
                "head_rank": self.head_rank, "reason": self.reason}


@dataclass(frozen=True)
class Accepted:
    """What a comparison may excuse: the committed acceptances (``source``: the file's path
    as the comment names it) and the PR's label, when it carries ``ACCEPT_LABEL``."""

    entries: tuple[Acceptance, ...] = ()
    source: str = ""
    label: str | None = None

    def find(self, loss: Loss) -> Acceptance | None:
        if self.label:
            return Acceptance(*loss.key, f"the pull request carries the label {self.label}")
        return next((a for a in self.entries if a.covers(loss)), None)


def loss_of(change, k: int, kind: str = "lost") -> Loss:
    """The loss a ``QuestionChange`` records: the chunk that was the base's first gold, and
    where it went (diff_questions.GoldMove)."""
    move = next((m for m in change.moves if m.base_rank == change.base_rank), None)
    if move is None:  # the base's first gold chunk did not move: another one fell past it
        move = next((m for m in change.moves if m.worse), None)
    chunk = move.id if move is not None else ""
    head = move.head_rank if move is not None else change.head_rank
    return Loss(change.id, chunk, int(change.base_rank), head, kind)


def lost_at_k(diff) -> list[Loss]:
    """The compared questions that had a gold chunk in the top k on the base and have none
    on the head (a retriever failure is the errors rule's), in id order."""
    out = [loss_of(q, diff.k) for q in diff.lost_changes
           if q.kind == "lost" and q.base_rank is not None and q.base_rank <= diff.k]
    return sorted(out, key=lambda x: x.question)


def fell_by_more(diff, places: int) -> list[Loss]:
    """The compared questions whose first gold rank fell by more than ``places`` (gone from
    the ranking counts as fallen past its end), in id order."""
    out = []
    for q in diff.regressions:
        if q.base_rank is None or q.kind == "error":
            continue
        head = q.head_rank if q.head_rank is not None else math.inf
        if head - q.base_rank > places:
            out.append(loss_of(q, diff.k, "fell"))
    return sorted(out, key=lambda x: x.question)


def flapping_on_base(diff, recent: RecentRuns | None) -> dict[str, str]:
    """Question id -> how the base side shows it flapping: the base run's ``--repeat``
    record (its outcome changed between identical passes) or the base branch's recent runs
    at the same k (``recent_runs.trail``)."""
    from ci_eval.core.compare.recent_runs import trail

    out: dict[str, str] = {}
    repeat = diff.base_info.repeat if diff.base_info is not None else None
    if repeat is not None:
        for qid, _, outcome in repeat.flapping:
            if outcome:
                out[qid] = f"its outcome changed in {outcome} of {repeat.passes - 1} repeated passes of the base run"
    if recent is not None and recent.k == diff.k:
        for qid, states in recent.states.items():
            line = trail(states)
            if line.flapping and qid not in out:
                out[qid] = f"missed in {line.misses} of the base branch's last {line.measured} runs"
    return out


@dataclass(frozen=True)
class Excused:
    """A loss that does not fail the gate, and why."""

    loss: Loss
    why: str  # the acceptance's reason, or how the base shows the question flapping
    accepted: bool  # True: a person accepted it; False: the question flaps on the base


def unused(accepted: Accepted, losses: Iterable[Loss]) -> tuple[Acceptance, ...]:
    """The committed acceptances this comparison's losses did not use."""
    keys = {x.key for x in losses}
    return tuple(a for a in accepted.entries if a.key not in keys)


# --------------------------------------------------------------------------- the file

def _entry(raw, place: str, source: str, problems: list) -> Acceptance | None:
    before = len(problems)

    def bad(where: str, message: str) -> None:
        problems.append(InputError(message, source, f"{place}.{where}" if where else place))

    if not isinstance(raw, Mapping):
        bad("", "expected a table with question, chunk, base_rank, head_rank and reason")
        return None
    unknown = sorted(set(raw) - {"question", "chunk", "base_rank", "head_rank", "reason"}, key=str)
    for key in unknown:
        bad(str(key), "unknown key (expected question, chunk, base_rank, head_rank, reason)")
    values = {}
    for key in ("question", "chunk", "reason"):
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            bad(key, f"expected a non-empty string, got {value!r}")
        values[key] = value
    if isinstance(values["reason"], str) and len(values["reason"]) > MAX_REASON:
        bad("reason", f"is {len(values['reason'])} characters, over the {MAX_REASON} allowed")
    for key in ("base_rank", "head_rank"):
        value = raw.get(key)
        if key == "head_rank" and value is None:
            continue  # absent: the chunk left the head's ranking altogether
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            bad(key, f"expected a rank (a whole number from 1), got {value!r}")
        values[key] = value
    if len(problems) > before:
        return None
    return Acceptance(values["question"], values["chunk"], values["base_rank"], raw.get("head_rank"),
                      values["reason"])


def parse_acceptances(doc, source: str) -> tuple[Acceptance, ...]:
    """A parsed acceptance file -> its entries; every problem at once, each at its place."""
    problems: list[InputError] = []
    if not isinstance(doc, Mapping):
        raise InputError("expected a TOML document", source)
    for key in sorted(set(doc) - {"accepted"}, key=str):
        problems.append(InputError("unknown key (the file holds [[accepted]] tables only)", source, str(key)))
    raw = doc.get("accepted", [])
    if not isinstance(raw, list):
        raise InputErrors([InputError("expected [[accepted]] tables", source, "accepted")])
    out, seen = [], {}
    for i, entry in enumerate(raw):
        found = _entry(entry, f"accepted[{i}]", source, problems)
        if found is None:
            continue
        if found.question in seen:
            problems.append(InputError(f"question {found.question!r} is accepted twice (also at "
                                       f"accepted[{seen[found.question]}]): one loss a question",
                                       source, f"accepted[{i}].question"))
            continue
        seen[found.question] = i
        out.append(found)
    if problems:
        raise InputErrors(problems)
    return tuple(sorted(out, key=lambda a: a.question))


def _toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's for every character JSON escapes;
    DEL, which JSON leaves as it is, TOML wants escaped."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007F")


_HEADER = """\
# Losses accepted on purpose, one per question: the gold chunk the question lost, its rank
# on the base and on the head (head_rank absent: it left the ranking), and why. Written by
# `ci-eval accept`; the pull request's diff is the review. An entry covers that exact loss
# only; once the change is merged, `ci-eval check` names the entries that match nothing.
"""


def acceptances_toml(entries: Iterable[Acceptance]) -> str:
    """The acceptance file's text: sorted by question, one table each, stable key order, so
    the diff of an acceptance is the lines of that acceptance."""
    parts = [_HEADER]
    for a in sorted(entries, key=lambda a: a.question):
        lines = ["[[accepted]]", f"question = {_toml_string(a.question)}", f"chunk = {_toml_string(a.chunk)}",
                 f"base_rank = {a.base_rank}"]
        if a.head_rank is not None:
            lines.append(f"head_rank = {a.head_rank}")
        lines.append(f"reason = {_toml_string(a.reason)}")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def merge_acceptances(old: Iterable[Acceptance], new: Iterable[Acceptance]) -> tuple[Acceptance, ...]:
    """``old`` with ``new`` on top: a question's new acceptance replaces its old one (which
    named another loss, so covered nothing any more)."""
    by_question = {a.question: a for a in old}
    by_question.update((a.question, a) for a in new)
    return tuple(sorted(by_question.values(), key=lambda a: a.question))


def accept_command(losses: Iterable[Loss], limit: int | None = None) -> str:
    """The shell command that accepts ``losses`` exactly as this comparison saw them (each
    ``--loss QUESTION CHUNK BASE_RANK HEAD_RANK``, ``-`` for a chunk gone from the ranking),
    so it needs no artefact where it is run; the reason is for the person to write. Up to
    ``limit`` losses (None: all)."""
    import shlex

    shown = list(losses)[:limit] if limit is not None else list(losses)
    parts = ["ci-eval accept --reason 'why this change is intended'"]
    for x in shown:
        head = str(x.head_rank) if x.head_rank is not None else "-"
        parts.append(f"--loss {shlex.quote(x.question)} {shlex.quote(x.chunk)} {x.base_rank} {head}")
    return " ".join(parts)


def chosen(losses: Iterable[Loss], questions: Iterable[str], every: bool, reason: str) -> tuple[Acceptance, ...]:
    """The acceptances `ci-eval accept` writes: each named question's loss in this
    comparison (``every``: all of them), with ``reason``. A named question that lost
    nothing here is refused with the ones that did, so a typo cannot accept nothing."""
    from ci_eval.errors import UsageError

    by_question = {x.question: x for x in losses}
    names = list(dict.fromkeys(questions))
    missing = [q for q in names if q not in by_question]
    if missing:
        lost = ", ".join(sorted(by_question)) or "none"
        raise UsageError(f"{', '.join(missing)}: lost nothing in this comparison (the losses: {lost})")
    picked = sorted(by_question) if every else names
    return tuple(Acceptance(*by_question[q].key, reason) for q in picked)


def given_loss(values: list[str]) -> Loss:
    """``--loss QUESTION CHUNK BASE_RANK HEAD_RANK`` (``-``: gone from the head's ranking)."""
    from ci_eval.errors import UsageError

    question, chunk, base, head = values
    def rank(text: str, allow_gone: bool) -> int | None:
        if allow_gone and text == "-":
            return None
        if not text.isdigit() or int(text) < 1:
            raise UsageError(f"--loss {' '.join(values)}: a rank is a whole number from 1"
                             + (" (or - for gone)" if allow_gone else "") + f", got {text!r}")
        return int(text)
    if not question.strip() or not chunk.strip():
        raise UsageError(f"--loss {' '.join(values)}: the question and the chunk must not be empty")
    return Loss(question, chunk, rank(base, False), rank(head, True))


def matching_nothing(entries: Iterable[Acceptance], gold: Mapping[str, Iterable[str]],
                     base=None) -> list[tuple[Acceptance, str]]:
    """The acceptances that can no longer match a loss, each with why: its question left
    the gold set, its chunk is no longer that question's gold, or (``base``: the base
    branch's questions by id, ``.get(id)`` -> QuestionResult) the base no longer has the chunk at the rank the loss
    started from: the change it accepted is merged, and the entry has done its work."""
    out = []
    for a in entries:
        if a.question not in gold:
            out.append((a, "the question is not in the gold set any more"))
        elif a.chunk not in set(gold[a.question]):
            out.append((a, f"{a.chunk} is no longer a gold chunk of the question"))
        elif base is not None:
            q = base.get(a.question)
            rank = next((g.rank for g in q.gold_ranks if g.id == a.chunk), None) if q is not None else None
            if rank != a.base_rank:
                where = f"at rank {rank}" if rank is not None else "nowhere in its ranking"
                out.append((a, f"the base has {a.chunk} {where}, not at rank {a.base_rank}: "
                               "the change is merged, remove the entry"))
    return out
