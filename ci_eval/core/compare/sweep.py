"""A sweep's table: several configurations measured on one gold set, each row compared
with the first by the paired test of core/compare/stats.py, and the best row named only
when the statistics can tell it apart.

- The questions compared are those **every** row measured (a question one row did not
  measure is left out of every row, and counted), so each row's means and every interval
  are over the same N questions. A question the retriever failed on is measured and scores
  0 (fail closed), as in every run.
- Row ``i``'s cell for metric ``m`` is its mean and the paired 95 % interval of
  ``mean_i - mean_1`` (the sign-flip test's own interval). The ``(rows - 1) x metrics``
  tests are one family: Holm's step-down corrects their p-values, and a cell is marked
  significant when its corrected p-value is below alpha.
- The best row: the rows ordered by the first metric's mean (ties: the earlier row), the
  top row tested against each other row on that metric (a second family, Holm-corrected).
  It is *provably best* when every one of those tests rejects. Otherwise the first row it
  cannot be told from is named, with how many questions would separate the difference seen
  (``questions_to_separate``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ci_eval.core.compare.stats import ALPHA, SEED, Z_POWER, PairedTest, corrected, paired_test, z_two_sided


@dataclass(frozen=True)
class RowValues:
    """One configuration's measured questions: ids and, per metric, their values in the
    same order."""

    label: str
    ids: tuple[str, ...]
    values: dict  # metric -> 1-D float array aligned with ids
    failed: int = 0  # questions the retriever failed on (not measured)


@dataclass(frozen=True)
class SweepRow:
    number: int
    label: str
    means: dict  # metric -> mean over the compared questions
    tests: dict  # metric -> PairedTest against row 1 (Holm-corrected); empty for row 1
    failed: int


@dataclass(frozen=True)
class Best:
    metric: str
    top: int  # row number of the highest mean
    separated: bool  # True: ahead of every other row after Holm's correction
    rival: int | None  # the first row the top cannot be told from (None when separated)
    difference: float  # top mean - rival mean (0.0 when separated)
    needed: int | None  # questions that would separate ``difference``; None when it is 0
    tests: dict  # row number -> PairedTest (top vs that row, Holm-corrected)


@dataclass(frozen=True)
class SweepTable:
    metrics: tuple[str, ...]
    rows: tuple[SweepRow, ...]
    n: int  # questions every row measured
    left_out: int  # questions some row did not measure
    family: int  # tests in the row-vs-row-1 family
    best: Best | None  # None with fewer than two rows or no compared question


def common_ids(rows: list[RowValues]) -> tuple[str, ...]:
    """The questions every row measured, in the first row's order."""
    shared = set(rows[0].ids)
    for row in rows[1:]:
        shared &= set(row.ids)
    return tuple(q for q in rows[0].ids if q in shared)


def _aligned(row: RowValues, ids: tuple[str, ...], metric: str) -> np.ndarray:
    where = {q: i for i, q in enumerate(row.ids)}
    values = np.asarray(row.values[metric], dtype=np.float64)
    return values[np.fromiter((where[q] for q in ids), dtype=np.int64, count=len(ids))]


def questions_to_separate(deltas: np.ndarray, difference: float, alpha: float = ALPHA) -> int | None:
    """About how many questions would make a mean difference of ``difference`` significant
    with 80 % power at level ``alpha``, for per-question deltas spread like ``deltas``.

    The sign-flip test's normal limit rejects when ``|mean| > z_a * s / sqrt(M)``, ``s**2``
    the mean squared delta per question; the mean of M questions has spread
    ``sqrt((s**2 - d**2) / M)``, so 80 % power needs
    ``d = (z_a * s + z_0.8 * sqrt(s**2 - d**2)) / sqrt(M)``, solved here for M (rounded up).
    None when ``difference`` is 0 (no number of questions separates equal means)."""
    d = abs(float(difference))
    if d == 0.0 or deltas.size == 0:
        return None
    s2 = float(np.mean(np.asarray(deltas, dtype=np.float64) ** 2))
    root = z_two_sided(alpha) * math.sqrt(s2) + Z_POWER * math.sqrt(max(s2 - d * d, 0.0))
    return max(1, math.ceil((root / d) ** 2))


def _best(rows: list[RowValues], ids, metric: str, means: list[float], seed: int, alpha: float) -> Best:
    order = sorted(range(len(rows)), key=lambda i: (-means[i], i))
    top = order[0]
    top_values = _aligned(rows[top], ids, metric)
    raw = {j: paired_test(metric, _aligned(rows[j], ids, metric), top_values, seed=seed + j, alpha=alpha)
           for j in order[1:]}
    tests = corrected(raw, seed=seed, alpha=alpha)
    rival = next((j for j in order[1:] if not (tests[j].significant and tests[j].delta > 0)), None)
    if rival is None:
        return Best(metric, top + 1, True, None, 0.0, None, {j + 1: t for j, t in tests.items()})
    difference = means[top] - means[rival]
    deltas = top_values - _aligned(rows[rival], ids, metric)
    needed = questions_to_separate(deltas, difference, alpha / max(len(rows) - 1, 1))
    return Best(metric, top + 1, False, rival + 1, difference, needed, {j + 1: t for j, t in tests.items()})


def sweep_table(rows: list[RowValues], metrics: tuple[str, ...], *, seed: int = SEED,
                alpha: float = ALPHA) -> SweepTable:
    """The table of ``rows`` (the first is the reference) on ``metrics`` (the first decides
    the best row)."""
    if not rows:
        raise ValueError("a sweep has at least one row")
    ids = common_ids(rows)
    left_out = len(set().union(*(set(r.ids) for r in rows)) - set(ids))
    columns = [{m: _aligned(r, ids, m) for m in metrics} for r in rows]
    raw: dict = {}
    values: dict = {}
    for i in range(1, len(rows)):
        for m in metrics:
            # the MDC is the family's (corrected), so not computed at alpha here too
            raw[(i, m)] = paired_test(m, columns[0][m], columns[i][m], seed=seed + i, alpha=alpha,
                                      with_mdc=False)
            values[(i, m)] = (m, columns[0][m], columns[i][m])
    tests = corrected(raw, seed=seed, alpha=alpha, values=values) if ids else raw
    out = []
    for i, row in enumerate(rows):
        means = {m: float(columns[i][m].mean()) if ids else math.nan for m in metrics}
        own: dict[str, PairedTest] = {m: tests[(i, m)] for m in metrics} if i else {}
        out.append(SweepRow(i + 1, row.label, means, own, row.failed))
    best = None
    if len(rows) > 1 and ids:
        first = metrics[0]
        best = _best(rows, ids, first, [r.means[first] for r in out], seed, alpha)
    return SweepTable(tuple(metrics), tuple(out), len(ids), left_out, len(raw), best)


def row_values(label: str, artefact, metrics: tuple[str, ...]) -> RowValues:
    """A run artefact's measured questions as a sweep row (a question the retriever failed
    on is measured and scores 0, fail closed, as in every run; a metric the artefact did not
    measure is refused by the caller, which can name the file)."""
    mask = artefact.measured_mask()
    ids = tuple(q for q, keep in zip(artefact.columns.ids, mask.tolist()) if keep)
    values = {m: artefact.column(m)[mask] for m in metrics}
    return RowValues(label, ids, values, len(artefact.columns.errors))
