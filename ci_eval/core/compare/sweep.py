"""A sweep's table: several configurations measured on one gold set and read as a ladder,
each row against the one before it and against the first, by the paired test of
core/compare/stats.py; the best row named only when the statistics can tell it apart, and
only on a metric that compares the rows.

- The questions compared are those **every** row measured (a question one row did not
  measure is left out of every row, and counted), so each row's means and every interval
  are over the same N questions. A question the retriever failed on is measured and scores
  0 (fail closed), as in every run.
- Row ``i``'s cell for metric ``m`` is its mean, the paired 95 % interval of its step from
  row ``i - 1`` and its change from row 1 (the sign-flip test's own intervals).
- One family: every step, every change from row 1 and every test of the best row against
  another on the deciding metric, each pair of rows tested once. Holm's step-down corrects
  their p-values together, so the marks in the cells and the sentence under the table say
  the same thing about the same pair.
- The deciding metric: the first headline metric, unless the rows search different indexes
  (chunkings): chunk-level metrics then move with the number of chunks a passage is cut
  into, not only with what is retrieved, so the rows are ranked on evidence recall (span
  gold) when the table has it, and not ranked otherwise (``Best.reason`` says why).
- The best row: the rows ordered by the deciding metric's mean (ties: the earlier row), the
  top row tested against each other row. It is *provably best* when every one of those
  tests rejects. Otherwise the first row it cannot be told from is named, with how many
  questions would separate the difference seen (``questions_to_separate``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

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
    index: str | None = None  # what names the row's index (version and [index] table); None: unknown
    notes: tuple[str, ...] = ()  # the run's warnings and first error


@dataclass(frozen=True)
class SweepRow:
    number: int
    label: str
    means: dict  # metric -> mean over the compared questions
    tests: dict  # metric -> PairedTest against row 1 (Holm-corrected); empty for row 1
    failed: int
    step: dict = None  # metric -> PairedTest against the row before (row 2: the same test as ``tests``)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Best:
    metric: str
    top: int  # row number of the highest mean
    separated: bool  # True: ahead of every other row after Holm's correction
    rival: int | None  # the first row the top cannot be told from (None when separated)
    difference: float  # top mean - rival mean (0.0 when separated)
    needed: int | None  # questions that would separate ``difference``; None when it is 0
    tests: dict  # row number -> PairedTest (top vs that row, Holm-corrected)
    chunkings: bool = False  # decided across different indexes (on evidence recall)


# Why chunk-level metrics rank no chunking: said under a table whose rows search different
# indexes and that has no evidence metric to decide on.
NOT_COMPARABLE = ("the rows search different indexes, and chunk-level metrics (recall@k, MRR, nDCG) "
                  "cannot rank chunkings: a passage cut into more chunks has more relevant chunks to "
                  "find, so they move with the chunk size, not only with what is retrieved")


@dataclass(frozen=True)
class SweepTable:
    metrics: tuple[str, ...]
    rows: tuple[SweepRow, ...]
    n: int  # questions every row measured
    left_out: int  # questions some row did not measure
    family: int  # tests in the one family (steps, changes from row 1, the best row's tests)
    best: Best | None  # None with fewer than two rows, no compared question, or no metric to decide on
    decided_on: str | None = None  # the deciding metric
    reason: str | None = None  # why no row is ranked, when the rows cannot be ranked


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


def deciding_metric(rows: list[RowValues], metrics: tuple[str, ...]) -> tuple[str | None, bool]:
    """``(metric, across chunkings)``: the first metric, or evidence recall when the rows
    search different indexes (None when the table has no evidence recall to decide on)."""
    indexes = {r.index for r in rows}
    if len(indexes) <= 1 or None in indexes:
        return metrics[0], False
    evidence = next((m for m in metrics if m.startswith("evidence_recall@")), None)
    return evidence, True


def _pairs(count: int, metrics: tuple[str, ...], decide: str | None, top: int | None) -> list:
    """The family: ``(earlier, later, metric)`` once each, in the order steps, changes from
    row 1, the top row against the others."""
    pairs: dict = {}
    for i in range(1, count):
        for m in metrics:
            pairs[(i - 1, i, m)] = None
            pairs[(0, i, m)] = None
    if decide is not None and top is not None:
        for j in range(count):
            if j != top:
                pairs[(min(j, top), max(j, top), decide)] = None
    return list(pairs)


def _toward(test: PairedTest, flip: bool) -> PairedTest:
    """``test`` read from the other side (later - earlier becomes earlier - later)."""
    if not flip:
        return test
    return replace(test, delta=-test.delta, ci_low=-test.ci_high, ci_high=-test.ci_low,
                   base_mean=test.head_mean, head_mean=test.base_mean, lost=test.gained, gained=test.lost)


def _best(rows, ids, decide: str, means: list[float], tests: dict, top: int, alpha: float,
          chunkings: bool) -> Best:
    order = sorted(range(len(rows)), key=lambda i: (-means[i], i))
    mine = {j: _toward(tests[(min(j, top), max(j, top), decide)], j > top) for j in order[1:]}
    rival = next((j for j in order[1:] if not (mine[j].significant and mine[j].delta > 0)), None)
    numbered = {j + 1: t for j, t in mine.items()}
    if rival is None:
        return Best(decide, top + 1, True, None, 0.0, None, numbered, chunkings)
    difference = means[top] - means[rival]
    deltas = _aligned(rows[top], ids, decide) - _aligned(rows[rival], ids, decide)
    family = next(iter(tests.values())).family if tests else 1
    needed = questions_to_separate(deltas, difference, alpha / max(family, 1))
    return Best(decide, top + 1, False, rival + 1, difference, needed, numbered, chunkings)


def sweep_table(rows: list[RowValues], metrics: tuple[str, ...], *, seed: int = SEED,
                alpha: float = ALPHA) -> SweepTable:
    """The table of ``rows`` (in ladder order, the first the reference) on ``metrics``."""
    if not rows:
        raise ValueError("a sweep has at least one row")
    ids = common_ids(rows)
    left_out = len(set().union(*(set(r.ids) for r in rows)) - set(ids))
    columns = [{m: _aligned(r, ids, m) for m in metrics} for r in rows]
    decide, chunkings = deciding_metric(rows, metrics)
    means = [{m: float(columns[i][m].mean()) if ids else math.nan for m in metrics} for i in range(len(rows))]
    top = None
    if decide is not None and len(rows) > 1 and ids:
        top = min(range(len(rows)), key=lambda i: (-means[i][decide], i))
    raw: dict = {}
    values: dict = {}
    for a, b, m in _pairs(len(rows), metrics, decide, top):
        # the MDC is the family's (corrected), so not computed at alpha here too
        raw[(a, b, m)] = paired_test(m, columns[a][m], columns[b][m], seed=seed + 1000 * a + b, alpha=alpha,
                                     with_mdc=False)
        values[(a, b, m)] = (m, columns[a][m], columns[b][m])
    tests = corrected(raw, seed=seed, alpha=alpha, values=values) if ids else raw
    out = []
    for i, row in enumerate(rows):
        own = {m: tests[(0, i, m)] for m in metrics} if i else {}
        step = {m: tests[(i - 1, i, m)] for m in metrics} if i else {}
        out.append(SweepRow(i + 1, row.label, means[i], own, row.failed, step, row.notes))
    best, reason = None, None
    if top is not None:
        best = _best(rows, ids, decide, [mm[decide] for mm in means], tests, top, alpha, chunkings)
    elif decide is None and len(rows) > 1:
        reason = NOT_COMPARABLE
    return SweepTable(tuple(metrics), tuple(out), len(ids), left_out, len(raw), best, decide, reason)


def index_identity(artefact) -> str | None:
    """What names the index a run searched: its version and its ``[index]`` table (the
    params that cut it), as the artefact records them; None when neither is known."""
    import json

    table = artefact.config.get("index") if isinstance(artefact.config, dict) else None
    version = artefact.header.index_version
    if not table and version is None:
        return None
    return json.dumps([version, table or {}], sort_keys=True, default=str)


def row_values(label: str, artefact, metrics: tuple[str, ...], notes: tuple[str, ...] = ()) -> RowValues:
    """A run artefact's measured questions as a sweep row (a question the retriever failed
    on is measured and scores 0, fail closed, as in every run; a metric the artefact did not
    measure is refused by the caller, which can name the file)."""
    mask = artefact.measured_mask()
    ids = tuple(q for q, keep in zip(artefact.columns.ids, mask.tolist()) if keep)
    values = {m: artefact.column(m)[mask] for m in metrics}
    return RowValues(label, ids, values, len(artefact.columns.errors), index_identity(artefact), tuple(notes))
