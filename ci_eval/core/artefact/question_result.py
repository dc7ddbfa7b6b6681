"""One question of one artefact as the comparison reads it: ``QuestionResult`` and its gold
ranks. Both the artefact reader (core/artefact/artefact.py) and the column store that makes these records
on demand (core/artefact/question_columns.py) build them; neither owns the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The statuses whose metrics count: answerable and measured, or failed (scored 0, fail closed).
MEASURED = ("ok", "error")


def in_means(status: str, unanswerable: bool) -> bool:
    """Whether a question counts in the summary's means and counts (overall and by tag):
    answerable, and measured or failed. An unanswerable question has no gold to score, even
    when it failed; it counts among the errors. The run writes and every reader checks the
    summary by this one rule."""
    return status in MEASURED and not unanswerable


@dataclass(frozen=True, slots=True)
class GoldRank:
    """Where one relevant (live, grade >= the relevance level) gold chunk came back; rank
    None: not in the recorded ranking."""

    id: str
    grade: float
    rank: int | None


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """One question of one artefact, read once with defaults for optional fields (slots: a
    comparison holds hundreds of thousands of them)."""

    id: str
    question: str
    tags: tuple[str, ...]
    status: str
    unanswerable: bool
    gold: tuple[tuple[str, float], ...]
    stale: tuple[str, ...]
    metrics: dict = field(compare=False)
    first_gold_rank: int | None
    top_score: float | None
    error: str | None
    answer_correct: bool | None
    gold_ranks: tuple[GoldRank, ...] = ()
    returned: int = 0  # how many results the ranking holds
    warnings: tuple[str, ...] = ()
    top: tuple[str, ...] = field(default=(), compare=False)  # the top results' ids (judged@k)

    @property
    def measured(self) -> bool:
        return self.status in MEASURED

    def value(self, metric: str) -> float:
        # error questions score 0 on every metric (docs/artefact.md): fail closed
        return float(self.metrics.get(metric, 0.0) or 0.0)

    def hit(self, k: int) -> bool | None:
        """hit@k as the run measured it; None when the run did not measure hit@k."""
        v = self.metrics.get(f"hit@{k}")
        return None if v is None else float(v) >= 1.0


# A frozen dataclass's __init__ sets each field through object.__setattr__: 10 µs for a
# QuestionResult, half of reading a row. Its fields' slot descriptors set them in half that;
# the record is the same (every field given, in declaration order, as __init__ would).
_FIELD_SETTERS = tuple(QuestionResult.__dict__[f].__set__ for f in QuestionResult.__dataclass_fields__)


def built_question(values: tuple) -> QuestionResult:
    q = object.__new__(QuestionResult)
    for set_field, value in zip(_FIELD_SETTERS, values):
        set_field(q, value)
    return q
