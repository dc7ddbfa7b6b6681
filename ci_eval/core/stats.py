"""Paired significance tests over the questions both runs share.

Forty questions is a small sample: one question is 2.5 points of hit@5. Each headline
metric gets three numbers, all computed on the per-question deltas ``d_i = head_i - base_i``
of the shared questions:

- a paired bootstrap percentile interval for the mean delta (10,000 resamples of the
  questions, fixed seed, so a comment is reproducible byte for byte);
- for binary metrics (``hit@k``), the exact McNemar test: under "no change" each of the
  ``b + c`` discordant questions (``b`` lost, ``c`` gained) is a fair coin, so the two-sided
  p-value is ``min(1, 2 * sum_{i <= min(b, c)} C(b + c, i) / 2**(b + c))``;
- the minimum detectable change (MDC) for this number of questions, see ``mdc``.

A change is *significant* when the McNemar p-value is below ``alpha`` (binary metrics) or
when the bootstrap interval excludes zero (other metrics); otherwise it is *within noise*.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
RESAMPLES = 10_000
SEED = 20_261_130
# z_{1 - alpha/2} + z_{power} for alpha = 0.05 two-sided and 80% power.
Z_ALPHA = 1.959963984540054
Z_POWER = 0.8416212335729143

_MULTINOMIAL_MAX_VALUES = 24  # below this many distinct deltas, draw value counts directly
_CHUNK_PICKS = 250_000  # picks materialised at once by the sparse sampler


@dataclass(frozen=True)
class PairedTest:
    """The paired comparison of one metric over ``n`` shared questions."""

    metric: str
    n: int
    base_mean: float
    head_mean: float
    delta: float  # head_mean - base_mean
    ci_low: float
    ci_high: float
    p_value: float | None  # exact McNemar for binary metrics, None otherwise
    lost: int  # questions whose value went down
    gained: int  # questions whose value went up
    mdc: float  # smallest |delta| this sample can detect (see ``mdc``)
    significant: bool
    method: str  # "mcnemar+bootstrap" | "bootstrap" | "none"

    @property
    def direction(self) -> str:
        if self.delta > 0:
            return "up"
        if self.delta < 0:
            return "down"
        return "flat"

    def as_dict(self) -> dict:
        return {
            "metric": self.metric,
            "n": self.n,
            "base": self.base_mean,
            "head": self.head_mean,
            "delta": self.delta,
            "ci": [self.ci_low, self.ci_high],
            "p_value": self.p_value,
            "lost": self.lost,
            "gained": self.gained,
            "mdc": self.mdc,
            "significant": self.significant,
            "method": self.method,
        }


def is_binary_metric(name: str) -> bool:
    """``hit@k`` (trec_eval's ``success_k``) is 0 or 1 per question; the rest are graded."""
    return name.startswith("hit@")


def mcnemar_exact(lost: int, gained: int) -> float:
    """Two-sided exact McNemar p-value: a binomial(b + c, 1/2) test on the discordant pairs.

    Computed with exact integers (``math.comb`` terms built incrementally) and one correctly
    rounded int/int division, so it neither overflows nor loses precision for thousands of
    discordant pairs.
    """
    if lost < 0 or gained < 0:
        raise ValueError("counts must be non-negative")
    n = lost + gained
    if n == 0:
        return 1.0
    m = min(lost, gained)
    if 2 * m == n:
        return 1.0
    term = 1  # C(n, 0)
    tail = 0
    for i in range(m + 1):
        tail += term
        term = term * (n - i) // (i + 1)
    return min(1.0, (2 * tail) / (1 << n))


def min_one_sided_flips(alpha: float = ALPHA) -> int:
    """Fewest discordant questions, all in one direction, that McNemar calls significant:
    the smallest ``m`` with ``2 / 2**m < alpha``."""
    m = 1
    while 2.0 / (1 << m) >= alpha:
        m += 1
    return m


def mdc(deltas: np.ndarray, head: np.ndarray, binary: bool, alpha: float = ALPHA) -> float:
    """Minimum detectable change of the mean delta for ``n = len(deltas)`` questions.

    ``MDC = (z_{1-alpha/2} + z_{0.8}) * s / sqrt(n)`` (paired z approximation, 80% power,
    two-sided ``alpha``), where ``s`` is the SD of the paired deltas. For a binary metric
    ``s**2`` is the discordance ``(b + c) / n`` (minus the squared mean), and the MDC is never
    below ``m / n`` with ``m = min_one_sided_flips(alpha)`` (6 at alpha 0.05): fewer flipped
    questions can never reach significance, whatever their direction. When no question
    moved, ``s`` is unknown; the SD of the head values is used instead, which is the paired
    SD at a between-run correlation of 0.5. Metrics live in [0, 1], so the MDC is capped at 1.
    """
    n = int(deltas.size)
    if n == 0:
        return math.inf
    z = Z_ALPHA + Z_POWER
    s = float(np.std(deltas, ddof=1)) if n > 1 else 0.0
    if s == 0.0 and not binary:
        s = float(np.std(head, ddof=1)) if n > 1 else 0.0
    value = z * s / math.sqrt(n)
    if binary:
        value = max(value, min_one_sided_flips(alpha) / n)
    return min(value, 1.0)  # every metric lives in [0, 1]


def _stream(seed: int, metric: str) -> np.random.Generator:
    # One stream per metric name: adding a metric leaves the others' intervals unchanged.
    return np.random.Generator(np.random.PCG64([seed, zlib.crc32(metric.encode("utf-8"))]))


def bootstrap_means(deltas: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """Means of ``resamples`` with-replacement resamples of ``deltas`` (same size).

    Exact, two vectorised samplers:

    - few distinct delta values (hit@k: -1, 0, 1): the counts of each value in a resample
      are one multinomial draw, ``resamples x values`` numbers in all;
    - otherwise only the non-zero deltas are sampled: a resample takes
      ``K ~ Binomial(n, nz / n)`` non-zero questions, uniformly among the ``nz`` of them.
      Unchanged questions (usually most) cost nothing.
    """
    n = int(deltas.size)
    values, counts = np.unique(deltas, return_counts=True)
    if values.size <= _MULTINOMIAL_MAX_VALUES:
        order = np.argsort(-counts, kind="stable")  # the big (zero) cell first: fewer draws
        draws = rng.multinomial(n, counts[order] / n, size=resamples)
        return (draws @ values[order]) / n
    nonzero = deltas[deltas != 0.0]
    nz = int(nonzero.size)
    picks = rng.binomial(n, nz / n, size=resamples)
    ends = np.cumsum(picks)
    sums = np.empty(resamples, dtype=np.float64)
    dtype = np.uint16 if nz <= 1 << 16 else np.int64
    start = 0
    while start < resamples:
        # a chunk of resamples whose picks fit the memory budget (at least one resample)
        first = int(ends[start - 1]) if start else 0
        stop = int(np.searchsorted(ends, first + _CHUNK_PICKS, side="right"))
        stop = max(stop, start + 1)
        total = int(ends[stop - 1]) - first
        idx = rng.integers(0, nz, size=total, dtype=dtype)
        local_ends = ends[start:stop] - first
        local_starts = np.concatenate(([0], local_ends[:-1]))
        if total:
            # reduceat sums each segment; an empty segment yields one stray value: masked
            seg = np.add.reduceat(nonzero[idx], np.minimum(local_starts, total - 1))
            sums[start:stop] = np.where(local_ends > local_starts, seg, 0.0)
        else:
            sums[start:stop] = 0.0
        start = stop
    return sums / n


def quantiles(values: np.ndarray, probabilities) -> np.ndarray:
    """``np.quantile(values, probabilities)`` (its default, linear interpolation), the same
    doubles, written out: numpy's ``np.quantile`` loads ``numpy.ma`` on first use (through
    ``np.unique``), a tenth of ``compare``'s start-up. Each step is numpy's own: the virtual
    index ``(n - 1) * q``, its neighbours (clipped as numpy clips them), one partition at
    the same positions (so equal values, -0.0 and 0.0, land where numpy puts them) and
    numpy's two-sided lerp. A NaN among the values is left to ``np.quantile``."""
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    q = np.asarray(probabilities, dtype=np.float64)
    if n == 0 or values.ndim != 1 or q.ndim != 1:
        return np.quantile(values, q)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above, below = virtual >= n - 1, virtual < 0
    previous[above] = following[above] = -1
    previous[below] = following[below] = 0
    previous, following = previous.astype(np.intp), following.astype(np.intp)
    kth = sorted({0, -1, *previous.tolist(), *following.tolist()})  # as np.unique orders them
    ordered = np.partition(values, kth)
    if np.isnan(ordered[-1]):
        return np.quantile(values, q)
    a, b = ordered[previous], ordered[following]
    gamma = virtual - previous
    spread = b - a
    out = a + spread * gamma
    return np.where(gamma >= 0.5, b - spread * (1 - gamma), out)


def paired_test(
    metric: str,
    base: np.ndarray,
    head: np.ndarray,
    *,
    seed: int = SEED,
    resamples: int = RESAMPLES,
    alpha: float = ALPHA,
) -> PairedTest:
    """Compare one metric on paired per-question values (same question order on both)."""
    base = np.asarray(base, dtype=np.float64)
    head = np.asarray(head, dtype=np.float64)
    if base.shape != head.shape or base.ndim != 1:
        raise ValueError("base and head must be 1-D arrays of the same length")
    n = int(base.size)
    binary = is_binary_metric(metric)
    if n == 0:
        return PairedTest(metric, 0, math.nan, math.nan, 0.0, 0.0, 0.0, None, 0, 0,
                          math.inf, False, "none")
    d = head - base
    lost = int(np.count_nonzero(d < 0))
    gained = int(np.count_nonzero(d > 0))
    delta = float(d.mean())
    if lost == 0 and gained == 0:
        low = high = 0.0
    else:
        means = bootstrap_means(d, _stream(seed, metric), resamples)
        low, high = (float(x) for x in quantiles(means, (alpha / 2, 1 - alpha / 2)))
    p = mcnemar_exact(lost, gained) if binary else None
    if binary:
        significant = p is not None and p < alpha
        method = "mcnemar+bootstrap"
    else:
        significant = (low > 0.0 or high < 0.0) and delta != 0.0
        method = "bootstrap"
    return PairedTest(
        metric=metric,
        n=n,
        base_mean=float(base.mean()),
        head_mean=float(head.mean()),
        delta=delta,
        ci_low=low,
        ci_high=high,
        p_value=p,
        lost=lost,
        gained=gained,
        mdc=mdc(d, head, binary, alpha),
        significant=bool(significant),
        method=method,
    )


def paired_tests(
    paired: dict[str, tuple[np.ndarray, np.ndarray]], *, seed: int = SEED,
    resamples: int = RESAMPLES, alpha: float = ALPHA,
) -> dict[str, PairedTest]:
    """``paired_test`` for each metric of ``{metric: (base_values, head_values)}``."""
    return {
        name: paired_test(name, b, h, seed=seed, resamples=resamples, alpha=alpha)
        for name, (b, h) in paired.items()
    }


def mean(values) -> float | None:
    """The one mean of the comparison: exact summation (``math.fsum``), None when empty."""
    values = list(values)
    return math.fsum(values) / len(values) if values else None


def min_shared_questions(alpha: float = ALPHA) -> int:
    """Fewest shared questions a comparison needs: below ``min_one_sided_flips`` (6 at
    alpha 0.05) no paired test can call any change significant, so a comparison on fewer
    questions would let any drop through under ``regressions = "significant"``."""
    return min_one_sided_flips(alpha)
