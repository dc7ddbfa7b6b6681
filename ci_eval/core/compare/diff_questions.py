"""Per-question change between base and head, over every measured metric.

A question is unchanged only when every metric both runs measured is unchanged. Its kind
says the most severe thing that happened: the retriever failed (``error``), the hit at k
was lost (``lost``) or its gold left the top 3k (``dropped``); or the reverse (``gained``,
``rose``); otherwise metrics moved down, up, or both (``mixed``, counted as a regression
and an improvement: regressions are per metric). Hits are read from the ``hit@k`` and
``hit@3k`` values the run measured, never recomputed. The explanation lists the gold chunks
whose rank moved, which of them left or entered the top k and the top 3k, and their grade
when the gold is graded.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.artefact.artefact import QuestionResult

# Question kinds, most severe first; "mixed" moved some metrics down and others up.
REGRESSION_KINDS = ("error", "lost", "dropped", "down", "mixed")
IMPROVEMENT_KINDS = ("gained", "fixed", "rose", "up", "mixed")
KIND_ORDER = ("error", "lost", "dropped", "down", "mixed", "gained", "fixed", "rose", "up",
              "same")
TOLERANCE = 1e-12  # float noise, not a change
# One string per phrase ("left the top 5", "metrics fell"; a handful for each k), not one
# made anew for each of a million changed questions.
_PHRASES: dict[str, str] = {}


def intern(phrase: str) -> str:
    return _PHRASES.setdefault(phrase, phrase)


@dataclass(frozen=True, slots=True)
class GoldMove:
    """One relevant gold chunk whose rank differs (None: not in that run's ranking)."""

    id: str
    grade: float
    base_rank: int | None
    head_rank: int | None
    crossed: str  # "left the top 5", "entered the top 15", or "" within the same band

    @property
    def worse(self) -> bool:
        b = self.base_rank if self.base_rank is not None else float("inf")
        h = self.head_rank if self.head_rank is not None else float("inf")
        return h > b


@dataclass(frozen=True, slots=True)  # one per compared question: hundreds of thousands
class QuestionChange:
    id: str
    question: str
    tags: tuple[str, ...]
    kind: str  # one of KIND_ORDER
    summary: str  # what happened in words, no user data
    base_rank: int | None
    head_rank: int | None
    deltas: tuple[tuple[str, float], ...]  # every metric both runs measured
    moves: tuple[GoldMove, ...] = ()
    graded: bool = False  # gold with grades other than 1: moves name the grade
    error: str | None = None

    @property
    def regression(self) -> bool:
        return self.kind in REGRESSION_KINDS

    @property
    def improvement(self) -> bool:
        return self.kind in IMPROVEMENT_KINDS

    def delta(self, metric: str) -> float:
        return dict(self.deltas).get(metric, 0.0)

    @property
    def worse(self) -> tuple[str, ...]:
        return tuple(m for m, d in self.deltas if d < -TOLERANCE)

    @property
    def better(self) -> tuple[str, ...]:
        return tuple(m for m, d in self.deltas if d > TOLERANCE)

    @property
    def detail(self) -> str:
        """The explanation as plain text (the JSON report; the comment formats its own)."""
        parts = [self.summary + (f": {self.error}" if self.error else "")] if self.summary else []
        parts += [move_text(m, self.graded, str) for m in self.moves]
        return "; ".join(parts)


def _band(rank: int | None, k: int) -> int:
    return 0 if rank is not None and rank <= k else 1 if rank is not None and rank <= 3 * k else 2


def gold_moves(b: QuestionResult, h: QuestionResult, k: int) -> tuple[GoldMove, ...]:
    """Relevant gold chunks whose rank moved, those that crossed k or 3k first."""
    base = {g.id: g for g in b.gold_ranks}
    head = {g.id: g for g in h.gold_ranks}
    moves = []
    for cid in sorted(base.keys() | head.keys()):
        br = base[cid].rank if cid in base else None
        hr = head[cid].rank if cid in head else None
        if br == hr:
            continue
        grade = (head.get(cid) or base[cid]).grade
        bb, hb = _band(br, k), _band(hr, k)
        crossed = ""  # the widest band it crossed: leaving the top 3k says more than k (one
        # string per phrase, interned below: there is a move for most changed questions)
        if hb > bb:
            crossed = f"left the top {3 * k if hb == 2 else k}"
        elif hb < bb:
            crossed = f"entered the top {k if hb == 0 else 3 * k}"
        moves.append(GoldMove(cid, grade, br, hr, intern(crossed)))
    return tuple(sorted(moves, key=lambda m: (m.crossed == "", -m.grade, m.id)))


def move_text(m: GoldMove, graded: bool, fmt) -> str:
    """``kb/x rank 3 → 12 (left the top 5)``; ``fmt`` formats the chunk id (a code span in
    the comment, plain in JSON)."""
    grade = f" (grade {m.grade:g})" if graded else ""
    b = "—" if m.base_rank is None else str(m.base_rank)
    h = "gone" if m.head_rank is None else str(m.head_rank)
    where = f" rank {b} → {h}" if m.base_rank is not None else f" new at rank {h}"
    return f"{fmt(m.id)}{grade}{where}" + (f", {m.crossed}" if m.crossed else "")


def _hits(b: QuestionResult, h: QuestionResult, k: int):
    pairs = [(b.hit(k), h.hit(k)), (b.hit(3 * k), h.hit(3 * k))]
    return [(x, y) if x is not None and y is not None else (None, None) for x, y in pairs]


# What ``question_case`` can find, most severe first: (kind, summary), the summary with the
# top 3k as ``{k3}``. ``core/compare/change_columns`` decides the same cases over columns.
CASES = (
    ("error", "retriever error"),
    ("gained", "retriever error fixed"),
    ("fixed", "retriever error fixed"),
    ("lost", "fell just past k, still in the top {k3}"),
    ("lost", "vanished (not in the top {k3})"),
    ("gained", "back within k (was in the top {k3})"),
    ("gained", "found again (was not in the top {k3})"),
    ("dropped", "left the top {k3}"),
    ("rose", "entered the top {k3}"),
    ("mixed", "some metrics fell, others rose"),
    ("down", "metrics fell"),
    ("up", "metrics rose"),
    ("same", ""),
)


def case_text(case: int, k: int) -> tuple[str, str]:
    """A case's kind and its summary for this k (one string per phrase)."""
    kind, summary = CASES[case]
    return kind, intern(summary.format(k3=3 * k))


def question_case(b: QuestionResult, h: QuestionResult, k: int, worse, better) -> int:
    """Which of ``CASES`` a compared question is: the reference the column version is held to."""
    if h.status == "error":
        return 0
    (bk, hk), (b3, h3) = _hits(b, h, k)
    if b.status == "error":
        return 1 if hk else 2
    if bk and hk is False:
        return 3 if h3 else 4
    if hk and bk is False:
        return 5 if b3 else 6
    if not hk and b3 and h3 is False:
        return 7
    if not hk and h3 and b3 is False:
        return 8
    if worse and better:
        return 9
    return 10 if worse else 11 if better else 12


def question_change(b: QuestionResult, h: QuestionResult, k: int,
                    metrics: tuple[str, ...], differences: tuple[float, ...] | None = None,
                    shared: dict | None = None) -> QuestionChange:
    """``differences``: head minus base for each of ``metrics`` when already computed.
    ``shared``: equal deltas share one tuple (most questions of a large run move in one of a
    few ways, or not at all)."""
    if differences is None:
        differences = tuple(h.value(m) - b.value(m) for m in metrics)
    deltas = tuple(zip(metrics, differences))
    if shared is not None:
        deltas = shared.setdefault(deltas, deltas)
    worse = [m for m, d in deltas if d < -TOLERANCE]
    better = [m for m, d in deltas if d > TOLERANCE]
    kind, summary = case_text(question_case(b, h, k, worse, better), k)
    return change_of(b, h, k, deltas, kind, summary)


def change_of(b: QuestionResult, h: QuestionResult, k: int, deltas: tuple, kind: str,
              summary: str) -> QuestionChange:
    """The change of a question whose kind is already known, with its gold moves."""
    graded = any(g != 1 for _, g in h.gold)
    return QuestionChange(h.id, h.question, h.tags, kind, summary, b.first_gold_rank,
                          h.first_gold_rank, deltas, gold_moves(b, h, k) if kind != "same"
                          else (), graded, h.error if h.status == "error" else None)


def severity(q: QuestionChange):
    """Most severe kind first, then the largest total movement over every metric."""
    moved = sum(abs(d) for _, d in q.deltas)
    return (KIND_ORDER.index(q.kind), -round(moved, 9), q.id)
