"""Two-sided abstention, paired: on the questions both runs scored (answerable and
unanswerable; the metric comparison leaves the unanswerable ones out), how often the head answers an
unanswerable question (a false answer) and says "not found" for an answerable one (a false
"not found") against the base, each side scored under its own ``abstain_below``.

Either count can be driven to zero by giving up the other (answer everything, or abstain
from everything), so both are tested, each by the exact McNemar test on its questions that
changed (newly wrong against newly right), the two one Holm family: a gate on this pair
fails a retriever that trades one error for the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.compare.stats import ALPHA, holm, mcnemar_exact

KINDS = (("false answers", "unanswerable", "false_answers"),
         ('false "not found"', "answerable", "false_not_found"))


@dataclass(frozen=True)
class AbstentionChange:
    kind: str  # "false answers" | 'false "not found"'
    pool: str  # "unanswerable" | "answerable": the questions it is counted on
    questions: int  # questions of that kind on both sides (unanswerable | answerable)
    base_wrong: int
    head_wrong: int
    worse: tuple[str, ...]  # newly wrong in head, sorted
    fixed: int  # wrong in base, right in head
    p_value: float
    p_adjusted: float

    @property
    def worsened(self) -> bool:
        """More newly wrong than newly right, and Holm-significant over the pair."""
        return len(self.worse) > self.fixed and self.p_adjusted < ALPHA


def _one(kind: str, pool_name: str, wrong_name: str, base, head):
    pool = {i for i, _ in getattr(head, pool_name)} & {i for i, _ in getattr(base, pool_name)}
    base_wrong = set(getattr(base, wrong_name)) & pool
    head_wrong = set(getattr(head, wrong_name)) & pool
    worse = tuple(sorted(head_wrong - base_wrong))
    fixed = len(base_wrong - head_wrong)
    return kind, pool_name, len(pool), len(base_wrong), len(head_wrong), worse, fixed


def abstention_changes(base, head) -> tuple[AbstentionChange, ...]:
    """``base``/``head``: the two sides' ``CutoffSide`` (core/compare/cutoff.py)."""
    rows = [_one(kind, pool, wrong, base, head) for kind, pool, wrong in KINDS]
    p = [mcnemar_exact(len(worse), fixed) for *_, worse, fixed in rows]
    return tuple(AbstentionChange(*row, p_value, adjusted)
                 for row, p_value, adjusted in zip(rows, p, holm(p)))
