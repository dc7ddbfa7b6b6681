"""The diff's per-question changes as columns; a ``QuestionChange`` is built only when read.

A ``QuestionChange`` with its gold moves, kept for every compared question, was about 360
bytes a question (most of a million-question comparison moves). Here a comparison keeps,
per compared question, its case (kind and summary, ``diff_questions.CASES``), its positions
in the two artefacts' columns (its deltas are cut from the artefacts' metric columns when a
reader needs them: a table of them was 72 MB more at a million); the kinds are decided over
the status codes and the hit@k / hit@3k columns exactly as ``question_case`` decides them
one question at a time. ``Changes`` is a sequence of changes made on access: the lists a
rendering shows build only what they show, counts and filters read the columns.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import repeat

import numpy as np

from ci_eval.core.artefact.column_views import ChangeSide
from ci_eval.core.artefact.question_columns import BuiltOnRead, QuestionColumns
from ci_eval.core.compare.diff_questions import (
    CASES,
    IMPROVEMENT_KINDS,
    KIND_ORDER,
    REGRESSION_KINDS,
    TOLERANCE,
    QuestionChange,
    case_text,
    change_of,
)

_CASE_KIND = np.array([KIND_ORDER.index(kind) for kind, _ in CASES], dtype=np.uint8)
_NONE, _FALSE, _TRUE = -1, 0, 1  # a hit the run did not measure, a miss, a hit


def hit_codes(columns: QuestionColumns, metric: str, positions) -> np.ndarray:
    """``QuestionResult.hit`` at ``positions`` as codes: -1 None, 0 False, 1 True."""
    if columns.table is None:  # version 1: each question's own mapping
        values = [columns.own_metrics[p].get(metric) for p in positions.tolist()]
        return np.array([_NONE if v is None else int(float(v) >= 1.0) for v in values],
                        dtype=np.int8)
    j = columns.table.where.get(metric)
    if j is None:
        return np.full(len(positions), _NONE, dtype=np.int8)
    values = columns.table.values[positions, j]
    return np.where(np.isnan(values), _NONE, values >= 1.0).astype(np.int8)


def _status_is(columns: QuestionColumns, positions, status: str) -> np.ndarray:
    codes = np.frombuffer(bytes(columns.status), dtype=np.uint8)[positions]
    names = columns.status_names
    return codes == names.index(status) if status in names else np.zeros(len(positions), bool)


def _paired(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both None when either side did not measure it (``diff_questions._hits``)."""
    either = (x == _NONE) | (y == _NONE)
    return np.where(either, _NONE, x), np.where(either, _NONE, y)


def question_cases(base, head, at_base, at_head, k: int, worse, better) -> np.ndarray:
    """Each compared question's index into ``CASES``, in the order ``question_case`` tries
    them (the first that holds wins)."""
    bk, hk = _paired(hit_codes(base, f"hit@{k}", at_base), hit_codes(head, f"hit@{k}", at_head))
    b3, h3 = _paired(hit_codes(base, f"hit@{3 * k}", at_base),
                     hit_codes(head, f"hit@{3 * k}", at_head))
    base_error = _status_is(base, at_base, "error")
    lost, gained = (bk == _TRUE) & (hk == _FALSE), (hk == _TRUE) & (bk == _FALSE)
    missed = hk != _TRUE
    conditions = [
        _status_is(head, at_head, "error"), base_error & (hk == _TRUE), base_error,
        lost & (h3 == _TRUE), lost, gained & (b3 == _TRUE), gained,
        missed & (b3 == _TRUE) & (h3 == _FALSE), missed & (h3 == _TRUE) & (b3 == _FALSE),
        worse & better, worse, better,
    ]
    return np.select(conditions, list(range(len(conditions))), default=len(CASES) - 1).astype(np.uint8)


_BLOCK = 4096


def rounded_as_python(values: np.ndarray, digits: int) -> np.ndarray:
    """``[round(x, digits) for x in values]``, the same doubles, in numpy where that is
    provable. Python rounds the exact x * 10**digits half to even to an integer n, then
    returns the double nearest n / 10**digits; numpy's ``rint(x * 10.0**digits) /
    10.0**digits`` divides the same n (correctly rounded) unless the product, rounded to a
    double, sits within an ulp of a half (then it may pick the other n) or is too large
    to hold n exactly. Those few go through Python's ``round``."""
    scale = 10.0 ** digits
    with np.errstate(invalid="ignore", over="ignore"):  # both left to Python's round
        scaled = values * scale
        out = np.rint(scaled) / scale
        near_half = np.abs(scaled - np.floor(scaled) - 0.5) <= np.spacing(np.abs(scaled))
        doubtful = near_half | ~(np.abs(scaled) < 2.0 ** 52)  # NaN and infinities too
    at = np.flatnonzero(doubtful)
    out[at] = [round(x, digits) for x in values[at].tolist()]
    return out


def _values_at(run, metric: str, positions: np.ndarray) -> np.ndarray:
    """``run.column(metric)[positions]`` without making the whole column (a block of a
    long list asks for a few thousand values of a million)."""
    table = run.columns.table
    if table is None:  # version 1: the artefact keeps its columns
        return run.column(metric)[positions]
    j = table.where.get(metric)
    if j is None:
        return np.zeros(len(positions))
    return np.nan_to_num(table.values[positions, j], nan=0.0) + 0.0  # +0.0: as ``column``


class ChangeColumns:
    """The changes of the compared questions (``ids``, in id order): ``at_base``/``at_head``
    their positions in each artefact (``Artefact``), ``metrics`` those both runs measured,
    ``paired`` their values at those positions (``diff_metrics.paired_values``), read once to
    find which moved."""

    def __init__(self, ids: tuple[str, ...], base_run, head_run, at_base, at_head, k: int,
                 metrics: tuple[str, ...], paired: dict):
        self.ids, self.base_run, self.head_run = ids, base_run, head_run
        self.base = base_run.columns if base_run is not None else None
        self.head = head_run.columns
        self.at_base, self.at_head, self.k, self.metrics = at_base, at_head, k, metrics
        worse, better = np.zeros(len(ids), dtype=bool), np.zeros(len(ids), dtype=bool)
        for m in metrics:
            delta = paired[m][1] - paired[m][0]
            worse |= delta < -TOLERANCE
            better |= delta > TOLERANCE
        self.case = (question_cases(self.base, self.head, at_base, at_head, k, worse, better)
                     if ids else np.zeros(0, dtype=np.uint8))
        self.kind = _CASE_KIND[self.case]
        # the budget renders a list at several lengths: the few dozen changes it shows are
        # built once, not at each length (a bound, so listing every change keeps none)
        self.change = lru_cache(maxsize=4096)(self._change)
        self._kept: dict[int, QuestionChange] | None = None  # see keep_listed

    def keep_listed(self) -> None:
        """Keep every change a full listing builds, for the next listing to reuse (two
        renderings that each list every change, the job summary and the JSON report)."""
        if self._kept is None:
            self._kept = {}

    def __len__(self) -> int:
        return len(self.ids)

    def _change(self, i: int, differences=None) -> QuestionChange:
        """``differences``: head minus base for each of ``metrics``, when ``changes_at``
        has cut them for a block already."""
        if differences is None:
            b = self.base.record(int(self.at_base[i]))
            h = self.head.record(int(self.at_head[i]))
            # ``value`` reads what the metric columns hold (0 for none, +0.0 for -0.0)
            deltas = tuple((m, h.value(m) - b.value(m)) for m in self.metrics)
        else:  # the deltas are known: read only what the change says of each side
            b = ChangeSide(self.base, int(self.at_base[i]), head=False)
            h = ChangeSide(self.head, int(self.at_head[i]))
            deltas = tuple(zip(self.metrics, differences))
        kind, summary = case_text(int(self.case[i]), self.k)
        return change_of(b, h, self.k, deltas, kind, summary)

    def changes_at(self, positions: np.ndarray):
        """The changes at ``positions``, a block at a time: each block's deltas cut from the
        metric columns at once (a rendering that lists every change asked each question's
        values one metric at a time, most of its time)."""
        for start in range(0, len(positions), _BLOCK):
            block = positions[start:start + _BLOCK]
            columns = [self.delta(m, block).tolist() for m in self.metrics]
            rows = zip(*columns) if columns else repeat(())  # no metric on both sides
            kept = self._kept
            for i, differences in zip(block.tolist(), rows):
                if kept is None:
                    yield self._change(i, differences)
                    continue
                change = kept.get(i)
                if change is None:
                    change = kept[i] = self._change(i, differences)
                yield change

    def of_kinds(self, kinds) -> np.ndarray:
        """The positions whose kind is one of ``kinds``, in id order."""
        return np.flatnonzero(np.isin(self.kind, [KIND_ORDER.index(kind) for kind in kinds]))

    def by_severity(self, positions: np.ndarray) -> np.ndarray:
        """``positions`` in ``diff_questions.severity``'s order: kind, then the largest total
        movement (rounded as Python's ``round`` does), then id (the positions' own order)."""
        moved = np.zeros(len(positions))
        for metric in self.metrics:  # left to right, as ``sum`` adds them
            moved = moved + np.abs(self.delta(metric, positions))
        rounded = -rounded_as_python(moved, 9)
        return positions[np.lexsort((rounded, self.kind[positions]))]

    def delta(self, metric: str, positions: np.ndarray) -> np.ndarray:
        """Head minus base on ``metric`` at ``positions``, as ``QuestionChange.delta``."""
        if metric not in self.metrics:
            return np.zeros(len(positions))
        head = _values_at(self.head_run, metric, self.at_head[positions])
        return head - _values_at(self.base_run, metric, self.at_base[positions])

    def regressions(self) -> np.ndarray:
        return self.by_severity(self.of_kinds(REGRESSION_KINDS))

    def improvements(self) -> np.ndarray:
        return self.by_severity(self.of_kinds(IMPROVEMENT_KINDS))

    def tags(self, i: int) -> tuple[str, ...]:
        head = self.head
        return head.tag_lists[head.tags[int(self.at_head[i])]]


class Changes(BuiltOnRead):
    """Changes made on access from ``ChangeColumns``; ``order``: which of them, in what order
    (positions into the columns)."""

    __slots__ = ("columns", "order")
    noun = "changes"

    def __init__(self, columns: ChangeColumns, order=None):
        self.columns = columns
        self.order = np.arange(len(columns)) if order is None else order

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(map(self.columns.change, self.order[i].tolist()))
        n = len(self)
        if not -n <= i < n:
            raise IndexError("change index out of range")
        return self.columns.change(int(self.order[i % n]))

    def __iter__(self):
        return self.columns.changes_at(self.order)

    def ids(self):
        """The changes' question ids, without building them."""
        ids = self.columns.ids
        return (ids[p] for p in self.order.tolist())

    def tags(self):
        """Each change's tags, without building it."""
        return map(self.columns.tags, self.order.tolist())

    def kinds(self):
        """Each change's kind, without building it."""
        return (KIND_ORDER[c] for c in self.columns.kind[self.order].tolist())

    def where(self, keep) -> Changes:
        """The changes this order's bool array ``keep`` marks, in this order."""
        return Changes(self.columns, self.order[keep])

