"""What `ci-eval run --repeat N` learns by asking the retriever the same questions again.

The first pass is the run the artefact records. Each further pass is compared with it, a
question at a time: its ranked ids (to the run's depth, in order) and its outcome (the rank
of the first gold chunk and hit@k). A question whose ranked ids differ in any pass is
"changed" (flapping); the record keeps, for each changed question, in how many passes the
ranking differed and in how many the outcome did, so a reader can tell a reshuffle below
the gold chunk from a question that is sometimes found and sometimes not. A question the
retriever failed on in a further pass is counted under ``failed`` (with the first such
question and its error): the run fails for it as it would for a failure in the first pass
(core/artefact/run_failure.py, the one definition of a failed run).

Only a hash of each first-pass ranking is held, so repeating a large run costs a few
machine words a question, never its rankings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ci_eval.core.artefact.question_row import FIELD
from ci_eval.errors import InputError

MAX_REPEAT = 20  # passes; each asks the retriever every question again
MAX_CHANGED_IDS = 1000  # changed questions named in the record; the count is always whole

# Positions in a version 2 row of the fields compared here.
_ID, _RANK, _RANKING, _ERROR = (FIELD[name] for name in ("id", "first_gold_rank", "ranking", "error"))


def parse_repeat(text: str) -> int:
    """The number of passes ``--repeat`` asks for, refused unless a whole 2 to MAX_REPEAT."""
    value = int(text) if (text or "").strip().isdigit() else None
    if value is None or not 2 <= value <= MAX_REPEAT:
        raise InputError(f"the number of passes must be a whole number 2 to {MAX_REPEAT}, got {text!r}",
                         "--repeat")
    return value


def _signature(row, k, depth) -> tuple[int, tuple]:
    """A row's (ranking hash, outcome): a failed question's outcome is its failing."""
    ids = tuple(entry[0] for entry in row[_RANKING][:depth])
    rank = row[_RANK]
    outcome = ("error",) if row[_ERROR] is not None else (rank, rank is not None and rank <= k)
    return hash(ids), outcome


@dataclass
class RepeatTally:
    """The first pass's signatures (``first``), then each further pass compared to them."""

    k: int | float
    depth: int
    passes: int = 1
    _first: dict = field(default_factory=dict)
    _changed: dict = field(default_factory=dict)  # id -> [ranking passes, outcome passes]
    _failed: dict = field(default_factory=dict)  # id -> its first error in a further pass

    def first(self, rows):
        """Pass ``rows`` (the recorded pass) through, keeping each one's signature."""
        keep, k, depth = self._first, self.k, self.depth
        for row in rows:
            keep[row[_ID]] = _signature(row, k, depth)
            yield row

    def add_pass(self, rows) -> None:
        """One further pass's rows, each compared with the first pass's."""
        self.passes += 1
        for row in rows:
            qid = row[_ID]
            before = self._first.get(qid)
            if before is None:
                continue  # not in the recorded pass: nothing to compare with
            if row[_ERROR] is not None:
                self._failed.setdefault(qid, row[_ERROR])
            ranking, outcome = _signature(row, self.k, self.depth)
            if ranking != before[0] or outcome != before[1]:
                counts = self._changed.setdefault(qid, [0, 0])
                counts[0] += 1
                counts[1] += outcome != before[1]

    def record(self) -> dict:
        """The artefact's ``repeat`` key, in the order the first pass asked."""
        named = [[qid, *self._changed[qid]] for qid in self._first if qid in self._changed]
        out = {"passes": self.passes, "questions": len(self._first), "changed": len(named),
               "flapping": named[:MAX_CHANGED_IDS]}
        first_failed = next((qid for qid in self._first if qid in self._failed), None)
        if first_failed is not None:
            out["failed"] = {"questions": len(self._failed), "first": [first_failed, self._failed[first_failed]]}
        return out


def repeat_line(repeat) -> str:
    """One sentence for a repeated run (run_head.Repeat), the terminal's and the comment's."""
    if repeat.deterministic:
        return f"Retriever is deterministic: no question changed across {repeat.passes} passes"
    return (f"Retriever is non-deterministic: {repeat.changed} of {repeat.questions} questions "
            f"changed across {repeat.passes} passes")
