"""The two-by-two failure matrix: gold retrieved at k? x answer correct?

Every wrong answer of a retrieval-augmented system has two candidate causes. With the
end-to-end verdicts the config's ``[answers]`` names (the team's promptfoo, DeepEval or Ragas
results, or JSON lines: core/answers.py joins them to the gold set) each question lands in one
cell:

- retrieved, correct: fine;
- retrieved, wrong: a generation failure (the model had the passage and did not use it);
- missed, wrong: a retrieval failure;
- missed, correct: answered from the model's own knowledge, right today, a hallucination
  tomorrow when the corpus and the world disagree.

Between base and head, a question moving from retrieved to missed is a *retrieval
regression*; from correct to wrong while still retrieved, a *generation regression*.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.artefact.artefact import QuestionResult

CELLS = ("retrieved_correct", "retrieved_wrong", "missed_wrong", "missed_correct")
CELL_LABELS = {
    "retrieved_correct": "retrieved, correct",
    "retrieved_wrong": "retrieved, wrong (generation)",
    "missed_wrong": "missed, wrong (retrieval)",
    "missed_correct": "missed, correct (own knowledge)",
}
ANSWERS_HINT = (
    "The failure matrix needs end-to-end answer verdicts: point `[answers]` in the config at the "
    "results of the eval you already run (`type = \"promptfoo\"`, `\"deepeval\"`, `\"ragas\"`, a "
    "`\"command\"` printing JSON lines, or a `\"jsonl\"` file of `{\"id\": \"q-001\", \"correct\": true}`); "
    "see docs/answers.md."
)


@dataclass(frozen=True)
class MatrixSide:
    """Cell counts over the measured questions whose answer verdict is known."""

    counts: tuple[tuple[str, int], ...]  # (cell, count) in CELLS order
    known: int
    unknown: int

    def count(self, cell: str) -> int:
        return dict(self.counts)[cell]

    @property
    def largest(self) -> tuple[str, ...]:
        """The failure cells holding the most questions: one, or several on a tie."""
        top = max((self.count(c) for c in CELLS[1:]), default=0)
        if not self.known or not top:
            return ()
        return tuple(c for c in CELLS[1:] if self.count(c) == top)


@dataclass(frozen=True)
class Transition:
    id: str
    question: str
    before: str  # cell
    after: str  # cell
    kind: str  # retrieval_regression | generation_regression | retrieval_fix | generation_fix | other


@dataclass(frozen=True)
class FailureMatrix:
    available: bool
    head: MatrixSide | None
    base: MatrixSide | None
    transitions: tuple[Transition, ...]
    own_knowledge: tuple[str, ...]  # head questions answered correctly without the gold chunk
    hint: str | None
    head_cells: tuple[tuple[str, str], ...] = ()  # (id, cell) of head's questions with a verdict

    def of_kind(self, kind: str) -> tuple[Transition, ...]:
        return tuple(t for t in self.transitions if t.kind == kind)


def _cell(q: QuestionResult, k: int) -> str | None:
    if q.answer_correct is None or not q.measured:
        return None
    retrieved = q.status == "ok" and bool(q.hit(k))
    return ("retrieved_" if retrieved else "missed_") + ("correct" if q.answer_correct else "wrong")


def _side(questions: tuple[QuestionResult, ...], k: int) -> tuple[MatrixSide, dict[str, str]]:
    cells: dict[str, str] = {}
    unknown = 0
    for q in questions:
        if not q.measured:
            continue
        cell = _cell(q, k)
        if cell is None:
            unknown += 1
        else:
            cells[q.id] = cell
    counts = tuple((c, sum(1 for v in cells.values() if v == c)) for c in CELLS)
    return MatrixSide(counts, len(cells), unknown), cells


def _kind(before: str, after: str) -> str:
    if before.startswith("retrieved") and after.startswith("missed"):
        return "retrieval_regression"
    if before.startswith("missed") and after.startswith("retrieved"):
        return "retrieval_fix"
    if before == "retrieved_correct" and after == "retrieved_wrong":
        return "generation_regression"
    if before == "retrieved_wrong" and after == "retrieved_correct":
        return "generation_fix"
    return "other"


def failure_matrix(base: tuple[QuestionResult, ...] | None, head: tuple[QuestionResult, ...],
                   k: int, compared: tuple[str, ...], base_k: int | None = None) -> FailureMatrix:
    """The matrix for head (and base when given, at its own k); transitions over the
    ``compared`` ids."""
    if not any(q.answer_correct is not None for q in head):
        return FailureMatrix(False, None, None, (), (), ANSWERS_HINT)
    head_side, head_cells = _side(head, k)
    base_side, base_cells = _side(base, base_k or k) if base is not None else (None, {})
    text = {q.id: q.question for q in head}
    transitions = []
    for qid in compared:
        before, after = base_cells.get(qid), head_cells.get(qid)
        if before and after and before != after:
            transitions.append(Transition(qid, text.get(qid, ""), before, after,
                                          _kind(before, after)))
    own = tuple(sorted(qid for qid, c in head_cells.items() if c == "missed_correct"))
    return FailureMatrix(True, head_side, base_side, tuple(transitions), own, None, tuple(head_cells.items()))
