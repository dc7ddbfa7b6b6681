"""Unanswerable questions and the "I could not find this" cutoff on the top score.

For an unanswerable question the top result's score should sit below the app's cutoff,
for an answerable one above it. ``analyse_cutoff`` reports both distributions, the gap
between them (lowest answerable top score vs highest unanswerable top score) and the cutoff
the gap suggests (its midpoint); when the two overlap there is no gap, and the system
cannot tell when it has nothing. The configured ``abstain_below`` is scored on both sides:
a false "not found" is an answerable question under it, a false answer an unanswerable
question at or above it. A question for which nothing came back abstains.

A retriever that returns no scores (a LangChain retriever drops them) is given its ranks
as scores (``results.rank_scores``). Those say nothing about how sure the retriever was, so a side
whose every answered question carries them (``ranks``) suggests no cutoff and draws no
histogram: the report says the scores are ranks instead.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ci_eval.core.artefact.artefact import QuestionResult
from ci_eval.core.artefact.question_columns import Questions
from ci_eval.core.svg import open_chart
from ci_eval.core.svg import xml as _xml

NO_GAP = "no gap: this system cannot tell when it has nothing"
RANKS = ("the retriever returned no scores, so its results are scored by rank (n for the "
         "first of n, 1 for the last): no cutoff can be checked or suggested from ranks")


@dataclass(frozen=True)
class CutoffSide:
    answerable: tuple[tuple[str, float | None], ...]  # (id, top score), sorted by id
    unanswerable: tuple[tuple[str, float | None], ...]
    cutoff: float | None  # configured abstain_below
    # Every answered question's top score is its count of results: rank_scores, not scores.
    ranks: bool = False

    @staticmethod
    def _scores(pairs) -> list[float]:
        if isinstance(pairs, ScoredIds):
            return pairs.sorted_scores()
        return sorted(s for _, s in pairs if s is not None)

    # Sorted once: the budget asks for the cutoff section hundreds of times at 100,000
    # questions. Callers only read these lists.
    @cached_property
    def answerable_scores(self) -> list[float]:
        return self._scores(self.answerable)

    @cached_property
    def unanswerable_scores(self) -> list[float]:
        return self._scores(self.unanswerable)

    @property
    def checkable(self) -> bool:
        return not self.ranks and bool(self.answerable_scores) and bool(self.unanswerable)

    @property
    def lowest_answerable(self) -> float | None:
        s = self.answerable_scores
        return s[0] if s else None

    @property
    def highest_unanswerable(self) -> float | None:
        s = self.unanswerable_scores
        # an unanswerable question with nothing returned sits below every score
        return s[-1] if s else (-math.inf if self.unanswerable else None)

    @property
    def gap(self) -> tuple[float, float] | None:
        """(highest unanswerable, lowest answerable) when the first is strictly lower."""
        lo, hi = self.highest_unanswerable, self.lowest_answerable
        if self.ranks or lo is None or hi is None or not lo < hi or math.isinf(lo):
            return None
        return (lo, hi)

    @property
    def has_gap(self) -> bool:
        lo, hi = self.highest_unanswerable, self.lowest_answerable
        return not self.ranks and lo is not None and hi is not None and lo < hi

    @property
    def suggested(self) -> float | None:
        """The midpoint of the gap, the cutoff that leaves both sides the widest margin."""
        g = self.gap
        return None if g is None else (g[0] + g[1]) / 2

    @cached_property
    def overlap(self) -> tuple[int, int]:
        """(answerable at or below the highest unanswerable, unanswerable at or above the
        lowest answerable): how many questions sit on the wrong side of each other."""
        lo, hi = self.highest_unanswerable, self.lowest_answerable
        if lo is None or hi is None or lo < hi:
            return (0, 0)
        # both lists are sorted: count by bisecting rather than by reading every score
        return (bisect_right(self.answerable_scores, lo),
                len(self.unanswerable_scores) - bisect_left(self.unanswerable_scores, hi))

    # The lists below are read by every rendering of the cutoff section: worked out once.
    @cached_property
    def false_not_found(self) -> tuple[str, ...]:
        if self.cutoff is None:
            return ()
        return tuple(i for i, s in self.answerable if s is None or s < self.cutoff)

    @cached_property
    def false_answers(self) -> tuple[str, ...]:
        if self.cutoff is None:
            return ()
        return tuple(i for i, s in self.unanswerable if s is not None and s >= self.cutoff)


    def errors_at(self, cutoff: float) -> tuple[int, int]:
        """(false "not found", false answers) if the app abstained below ``cutoff``: counted
        by bisecting the sorted scores (the budget renders the cutoff section many times)."""
        answerable, no_score, unanswerable = self._sorted_scores
        return (no_score + bisect_left(answerable, cutoff),
                len(unanswerable) - bisect_left(unanswerable, cutoff))

    @cached_property
    def _sorted_scores(self) -> tuple[list[float], int, list[float]]:
        """(answerable scores sorted, answerable without a score, unanswerable scores sorted)."""
        answerable = self.answerable_scores
        return answerable, len(self.answerable) - len(answerable), self.unanswerable_scores

    @cached_property
    def least_wrong(self) -> tuple[float, int, int] | None:
        """When the scores overlap: the cutoff with the fewest false "not found" plus false
        answers (fewer false answers on a tie: an answer to the unanswerable is the worse
        mistake), as (cutoff, false "not found", false answers). Candidates are the
        midpoints between neighbouring distinct scores, so the cutoff sits between two
        observed scores rather than on one. Every candidate's errors are counted at once by
        searching the sorted scores; the first of equal keys wins, as ``min`` would pick."""
        if not self.checkable or self.has_gap:
            return None
        import numpy as np

        scores = sorted(set(self.answerable_scores + self.unanswerable_scores))
        at = np.array(scores, dtype=float)
        candidates = (at[:-1] + at[1:]) / 2 if len(at) > 1 else at
        answerable, no_score, unanswerable = self._sorted_scores
        not_found = no_score + np.searchsorted(np.array(answerable, dtype=float), candidates)
        wrong = len(unanswerable) - np.searchsorted(np.array(unanswerable, dtype=float),
                                                    candidates)
        n = int(np.lexsort((candidates, wrong, not_found + wrong))[0])
        # the value itself from the scores, as the midpoint of two Python numbers
        best = (scores[n] + scores[n + 1]) / 2 if len(scores) > 1 else scores[0]
        return (best, *self.errors_at(best))


@dataclass(frozen=True)
class CutoffReport:
    head: CutoffSide
    base: CutoffSide | None


def cutoff_side(questions: Sequence[QuestionResult], cutoff: float | None) -> CutoffSide:
    if isinstance(questions, Questions):  # read from the columns, no record made
        return _side_of_columns(questions, cutoff)
    answerable, unanswerable, tops = [], [], []
    for q in questions:
        if q.status == "unanswerable" or q.unanswerable:
            unanswerable.append((q.id, q.top_score))
        elif q.status == "ok":
            answerable.append((q.id, q.top_score))
        else:
            continue
        if q.returned:
            tops.append((q.top_score, q.returned))
    ranks = bool(tops) and all(top == n for top, n in tops)
    return CutoffSide(tuple(sorted(answerable)), tuple(sorted(unanswerable)), cutoff, ranks)


class ScoredIds(Sequence):
    """(id, top score) pairs sorted by id, held as the ids and one float array (NaN: no
    score) rather than a tuple and a float object per question. The ids may be given as
    the artefact's id column and the positions picked (``positions``): the list is made
    when first read (a comparison reads the scores of every answerable question, the ids
    of only a few)."""

    __slots__ = ("_ids", "_positions", "scores")

    def __init__(self, ids: list[str], scores: array, positions=None):
        self._ids, self._positions, self.scores = ids, positions, scores

    @property
    def ids(self) -> list[str]:
        if self._positions is not None:
            self._ids = list(map(self._ids.__getitem__, self._positions.tolist()))
            self._positions = None
        return self._ids

    def __len__(self) -> int:
        return len(self.scores)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(zip(self.ids[i], map(_score, self.scores[i])))
        return self.ids[i], _score(self.scores[i])

    def __iter__(self):
        return zip(self.ids, map(_score, self.scores))

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def sorted_scores(self) -> list[float]:
        """The scores there are, ascending: ``sorted`` of them (a stable sort of the same
        doubles, so -0.0 and 0.0 keep their order too)."""
        import numpy as np

        scores = np.frombuffer(self.scores, dtype=np.float64)
        return np.sort(scores[~np.isnan(scores)], kind="stable").tolist()

    __hash__ = None


def _score(x: float) -> float | None:
    return None if x != x else x


def _side_of_columns(questions: Questions, cutoff: float | None) -> CutoffSide:
    """Both sides' questions picked by masks over the status and flag columns, in id order
    (the questions' own order when it is ``sorted_by_id``'s, a stable sort by id otherwise)."""
    import numpy as np

    columns = questions.columns
    names = columns.status_names
    codes = np.frombuffer(columns.status, dtype=np.uint8)
    unanswerable = ((codes == names.index("unanswerable")) if "unanswerable" in names
                    else np.zeros(len(codes), dtype=bool))
    unanswerable |= np.frombuffer(columns.unanswerable, dtype=np.uint8) != 0
    answerable = ~unanswerable & ((codes == names.index("ok")) if "ok" in names else False)
    if questions.by_id:  # sorted_by_id's order: a stable sort by id of every position
        order = np.asarray(questions.order, dtype=np.intp)
    else:
        order = np.array(sorted(range(len(codes)), key=columns.ids.__getitem__), dtype=np.intp)
    top = np.frombuffer(columns.top_score, dtype=np.float64)
    returned = np.frombuffer(columns.returned, dtype=np.uint32)
    answered = (answerable | unanswerable) & (returned > 0)
    ranks = bool(answered.any()) and bool((top[answered] == returned[answered]).all())

    def scored(mask: np.ndarray) -> ScoredIds:
        positions = order[mask[order]]
        return ScoredIds(columns.ids, array("d", top[positions].tobytes()), positions)

    return CutoffSide(scored(answerable), scored(unanswerable), cutoff, ranks)


def analyse_cutoff(base: tuple[QuestionResult, ...] | None, base_cut: float | None,
                   head: tuple[QuestionResult, ...], head_cut: float | None) -> CutoffReport:
    return CutoffReport(cutoff_side(head, head_cut),
                        None if base is None else cutoff_side(base, base_cut))


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def _bin_counts(scores: list[float], lo: float, step: float, bins: int) -> list[int]:
    """How many scores fall in each bin: ``histogram``'s ``bin_of`` over every score at once
    (the same float steps; every score is at least ``lo``, so truncation is the floor)."""
    import numpy as np

    if not scores:
        return [0] * bins
    at = np.minimum(((np.array(scores) - lo) / step).astype(np.int64), bins - 1)
    return np.bincount(at, minlength=bins).tolist()


def histogram(side: CutoffSide, bins: int = 10, width: int = 20) -> str:
    """Both distributions as text bars that fit a code block (ASCII and block characters)."""
    a, u = side.answerable_scores, side.unanswerable_scores
    scores = a + u
    if not scores:
        return "(no scores)"
    lo, hi = min(scores), max(scores)
    marks = [x for x in (side.cutoff,) if x is not None]
    lo, hi = min([lo] + marks), max([hi] + marks)
    if hi == lo:
        hi = lo + 1.0
    step = (hi - lo) / bins

    def bin_of(x: float) -> int:
        return min(int((x - lo) / step), bins - 1)

    ca, cu = _bin_counts(a, lo, step, bins), _bin_counts(u, lo, step, bins)
    top = max(ca + cu) or 1
    edges = [f"{_fmt(lo + i * step)}–{_fmt(lo + (i + 1) * step)}" for i in range(bins)]
    ew = max([len(e) for e in edges] + [len("top score")])
    lines = [f"{'top score':<{ew}}  {'answerable':<{width + 5}}  unanswerable"]
    for i in range(bins - 1, -1, -1):
        bar_a = "█" * math.ceil(ca[i] * width / top) if ca[i] else ""
        bar_u = "░" * math.ceil(cu[i] * width / top) if cu[i] else ""
        cell_a = f"{bar_a} {ca[i]}" if ca[i] else "·"
        cell_u = f"{bar_u} {cu[i]}" if cu[i] else "·"
        note = ""
        if side.cutoff is not None and bin_of(side.cutoff) == i:
            note = f"  ◀ cutoff {_fmt(side.cutoff)}"
        lines.append(f"{edges[i]:>{ew}}  {cell_a:<{width + 5}}  {cell_u}{note}".rstrip())
    none_a, none_u = len(side.answerable) - len(a), len(side.unanswerable) - len(u)
    if none_a or none_u:
        lines.append(f"{'nothing':>{ew}}  {none_a or '·'!s:<{width + 5}}  {none_u or '·'}")
    return "\n".join(lines)




def render_svg(side: CutoffSide, title: str = "Top score: answerable vs unanswerable") -> str:
    """An SVG strip plot of both top-score distributions with the configured and suggested
    cutoffs. Written by hand, deterministic (fixed decimals), every text node escaped."""
    w, h, left, right = 640, 250, 130, 24
    top, bottom = 78, 200  # the plotting band, below the title, the note and cutoff labels
    rows = (("answerable", side.answerable_scores, 115, "#2f6fb0"),
            ("unanswerable", side.unanswerable_scores, 170, "#c2452d"))
    scores = side.answerable_scores + side.unanswerable_scores
    marks = [x for x in (side.cutoff, side.suggested) if x is not None]
    lo = min(scores + marks, default=0.0)
    hi = max(scores + marks, default=1.0)
    if hi == lo:
        hi = lo + 1.0
    pad = (hi - lo) * 0.03  # keep the extreme points off the frame
    lo, hi = lo - pad, hi + pad

    def x_of(v: float) -> str:
        return f"{left + (v - lo) / (hi - lo) * (w - left - right):.2f}"

    out = open_chart(w, h, title)
    if side.ranks:  # nothing to plot: every point would sit at its count of results
        out.append(f'<text x="8" y="40" fill="#c2452d">{_xml("The scores are ranks.")}</text>')
        out.append(f'<text x="8" y="60" fill="#555555">{_xml(RANKS[:RANKS.index(":")])}.</text>')
        return "\n".join(out + ["</svg>"]) + "\n"
    if not side.has_gap and side.checkable:
        out.append(f'<text x="8" y="40" fill="#c2452d">{_xml(NO_GAP)}</text>')
    for label, values, y, color in rows:
        out.append(f'<text x="8" y="{y + 4}">{_xml(label)} ({len(values)})</text>')
        out.append(f'<line x1="{left}" y1="{y}" x2="{w - right}" y2="{y}" stroke="#dddddd"/>')
        seen: dict[str, int] = {}
        for v in values:
            cx = x_of(v)
            stack = seen.get(cx, 0)
            seen[cx] = stack + 1
            cy = y - 6 * (stack % 4) + 9 * (stack // 4 % 2)
            out.append(f'<circle cx="{cx}" cy="{cy}" r="4" fill="{color}" '
                       f'fill-opacity="0.6"><title>{_xml(_fmt(v))}</title></circle>')
    for value, label, dash, label_y in ((side.cutoff, "configured cutoff", "6 3", top - 8),
                                        (side.suggested, "suggested cutoff", "2 2", bottom + 14)):
        if value is None:
            continue
        x = x_of(value)
        out.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="#333333" '
                   f'stroke-dasharray="{dash}"/>')
        out.append(f'<text x="{x}" y="{label_y}" text-anchor="middle">'
                   f"{_xml(label)} {_xml(_fmt(value))}</text>")
    axis_y = h - 14
    out.append(f'<line x1="{left}" y1="{axis_y - 14}" x2="{w - right}" y2="{axis_y - 14}" stroke="#999999"/>')
    for i in range(5):
        v = lo + (hi - lo) * i / 4
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        out.append(f'<text x="{x_of(v)}" y="{axis_y}" text-anchor="{anchor}" fill="#555555">{_xml(_fmt(v))}</text>')
    out.append(f'<text x="8" y="{axis_y}" fill="#555555">top score</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
