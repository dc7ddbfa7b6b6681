"""Paired comparisons of one metric over the questions both runs share.

Forty questions is a small sample: one question is 2.5 points of hit@5. Every metric is
compared on the per-question deltas ``d_i = head_i - base_i`` of the shared questions. Each
row of the comparison carries one p-value and one 95 % interval, both from the same
procedure, uncorrected, so that zero lies outside the interval exactly when ``p < alpha``:

- **0/1 metrics** (hit@k; recall@k and the like when every value is 0 or 1; a metric whose
  values are 0 or one same ``c``, such as precision@k on single-gold questions, is ``c``
  times one, ``share_scale``): the change is a paired difference of two shares, tested by
  the score test of Tango (1998) and given Tango's score interval, the set of differences that test does not reject (Tango T.,
  "Equivalence test and confidence interval for the difference in proportions for the
  paired-sample design", Statistics in Medicine 17:891-908, 1998; Newcombe R.G., "Improved
  confidence intervals for the difference between binomial proportions based on paired
  data", Statistics in Medicine 17:2635-2650, 1998, compares it with ten others). At a
  difference of zero the score statistic is McNemar's, ``(gained - lost) / sqrt(gained +
  lost)``. The interval never leaves [-1, 1]: the constrained likelihood it is built on
  exists only there;
- **rank metrics in [0, 1]** (MRR, nDCG, MAP, recall and precision of several gold chunks):
  the **sign-flip permutation test** of the mean delta (Fisher 1935; Good, "Permutation,
  Parametric and Bootstrap Tests of Hypotheses", 2005, ch. 3): under "no change" each moved
  question's delta is as likely to have had the other sign, so ``S = sum(d_i)`` is compared
  with ``sum(+-d_i)`` over the sign patterns. Its interval is the test inverted: the
  differences ``delta`` for which the same test on ``d_i - delta`` does not reject, searched
  over [-1, 1], the only differences two metrics in [0, 1] can have. So the interval cannot
  leave [-1, 1] by construction and needs no normal approximation or transformation; a
  bootstrap interval was the alternative, but it is not the inverse of the test whose
  p-value the row prints;
- deltas are put on an integer grid (``GRID`` units per metric point) before anything is
  summed, so ``S``, every flipped sum and the comparison of the two are integer arithmetic:
  a decision sitting at zero is the same on every CPU and BLAS;
- the sign-flip null distribution is exact when the moved questions are few (every sign
  pattern) or when their deltas share a coarse grid (a convolution of binomials), ``DRAWS``
  seeded random sign patterns up to ``MC_MAX`` questions, and the normal limit of the
  flipped sum beyond;
- ``p_drop``: the gate's own test, one-sided for a drop: the sign-flip test's lower tail,
  which for a 0/1 metric is the exact one-sided McNemar (binomial) test. It is exact, so under
  no change it fails at most ``alpha`` of the time however often the retriever flaps;
- the minimum detectable change (MDC), see ``mdc``.

Several metrics, or several tags, are one *family*: ``holm`` corrects the family's
p-values (Holm 1979, "A simple sequentially rejective multiple test procedure",
Scandinavian Journal of Statistics 6:65-70), and a change is *significant* when its
corrected p-value is below ``alpha``. The interval and ``p_value`` stay each metric's own
(uncorrected); ``p_adjusted`` is the corrected one, and whatever prints it says so.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

ALPHA = 0.05
POWER = 0.8
DRAWS = 10_000  # random sign patterns, past the exact range
SEED = 20_261_130
GRID = 10**9  # integer units per metric point: deltas of metrics in [0, 1] fit int64 sums
ENUMERATE_MAX = 16  # every sign pattern up to this many moved questions (65,536 sums)
MC_MAX = 200  # random sign patterns up to this many moved questions, the normal limit beyond
_CONVOLVE_COST = 4_000_000  # array cells a grid convolution may touch before it steps aside
_NORMAL = NormalDist()


def z_two_sided(alpha: float) -> float:
    """``z_{1 - alpha/2}``."""
    return _NORMAL.inv_cdf(1.0 - alpha / 2.0)


Z_ALPHA = z_two_sided(ALPHA)
Z_POWER = _NORMAL.inv_cdf(POWER)


@dataclass(frozen=True)
class PairedTest:
    """The paired comparison of one metric over ``n`` shared questions."""

    metric: str
    n: int
    base_mean: float
    head_mean: float
    delta: float  # head_mean - base_mean
    ci_low: float  # the test's own 95 % interval (uncorrected), inside [-1, 1]
    ci_high: float
    p_value: float | None  # the same test's two-sided p-value (uncorrected), None without questions
    lost: int  # questions whose value went down
    gained: int  # questions whose value went up
    mdc: float  # smallest |delta| detected with 80 % power at the family's level (``mdc``)
    significant: bool  # the family's corrected decision (``holm``)
    method: str  # "Tango score" | "exact sign-flip" | "sign-flip, N draws" | "sign-flip, normal" | "none"
    raw_significant: bool = False  # this metric's own test at alpha, before the correction
    p_adjusted: float | None = None  # Holm-adjusted over the family
    family: int = 1  # tests in the family the correction is over
    ties: int = 0  # questions counted as unchanged in the test: they flapped across repeated passes
    p_drop: float | None = None  # one-sided exact sign-flip p for a drop (the gate's test), uncorrected

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
            "p_adjusted": self.p_adjusted,
            "family": self.family,
            "lost": self.lost,
            "gained": self.gained,
            "mdc": self.mdc,
            "significant": self.significant,
            "raw_significant": self.raw_significant,
            "method": self.method,
            "p_drop": self.p_drop,
            **({"ties": self.ties} if self.ties else {}),
        }


def is_binary_metric(name: str) -> bool:
    """``hit@k`` (trec_eval's ``success_k``) is 0 or 1 per question; the rest are graded."""
    return name.startswith("hit@")


def zero_one(metric: str, base: np.ndarray, head: np.ndarray) -> bool:
    """Whether a metric is 0 or 1 on every question of both runs: ``hit@k`` always,
    recall@k on single-gold questions too. Such deltas get the binary MDC, so two metrics
    with identical values get the same one."""
    if is_binary_metric(metric):
        return True
    both = np.concatenate((np.asarray(base, float), np.asarray(head, float)))
    return bool(np.all((both == 0.0) | (both == 1.0)))


def share_scale(base: np.ndarray, head: np.ndarray) -> float | None:
    """``c`` when every value of both runs is 0 or one same ``c > 0``: the metric is then
    ``c`` times a 0/1 value per question (hit@k; recall@k and MRR where every question has
    one gold chunk found at rank 1 or not at all; precision@k as ``1/k`` times hit@k), and
    its change is ``c`` times a paired difference of shares. None otherwise."""
    both = np.concatenate((np.asarray(base, float), np.asarray(head, float)))
    positive = both[both != 0.0]
    if positive.size == 0:
        return 1.0
    c = float(positive[0])
    return c if c > 0 and bool(np.all(positive == c)) else None


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
    """Fewest moved questions, all in one direction, that the sign-flip test can call
    significant, whatever their deltas: the smallest ``m`` with ``2 / 2**m < alpha`` (the
    all-one-sign pattern and its mirror are the two most extreme of the ``2**m``)."""
    m = 1
    while 2.0 / (1 << m) >= alpha:
        m += 1
    return m


def on_grid(deltas: np.ndarray) -> np.ndarray:
    """Deltas as int64 grid units: ``round(d * GRID)``, each one IEEE operation."""
    return np.rint(np.asarray(deltas, dtype=np.float64) * GRID).astype(np.int64)


@dataclass(frozen=True)
class NullTail:
    """The sign-flip test of one set of moved deltas (grid units): the p-value of the
    observed ``|S|`` and ``accepted``, the largest ``|S|`` the test does not reject at
    ``alpha`` (reject exactly when ``|S| > accepted``)."""

    p_value: float
    accepted: float
    method: str


def _binomial_pmf(c: int) -> np.ndarray:
    """P(K = j) for K ~ Binomial(c, 1/2), j = 0..c, in logs (no overflow at any c): the
    log of C(c, j) as the running sum of log((c - j + 1) / j)."""
    j = np.arange(1, c + 1, dtype=np.float64)
    logs = np.concatenate(([0.0], np.cumsum(np.log(c - j + 1) - np.log(j))))
    return np.exp(logs - c * math.log(2.0))


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ascending distinct values and their counts (``np.unique`` would load ``numpy.ma``,
    a tenth of ``compare``'s start-up)."""
    ordered = np.sort(values)
    starts = np.concatenate(([0], np.flatnonzero(np.diff(ordered)) + 1))
    return ordered[starts], np.diff(np.concatenate((starts, [ordered.size])))


def _from_distribution(values: np.ndarray, probs: np.ndarray, observed: int,
                       alpha: float, method: str) -> NullTail:
    """``values``: the distinct ``|S|``, ascending, with their probabilities."""
    tail = np.cumsum(probs[::-1])[::-1]  # P(|S| >= value)
    at = int(np.searchsorted(values, observed, side="left"))
    p = float(tail[at]) if at < values.size else 0.0
    kept = np.flatnonzero(tail >= alpha)
    last = int(kept[-1]) if kept.size else -1
    accepted = float(values[last]) if last >= 0 else 0.0
    # ``observed`` is itself a sign pattern's |S|: ``p < alpha`` exactly when it is past
    # ``accepted``, both read from the same tail array
    return NullTail(min(p, 1.0), accepted, method)


def _enumerated(q: np.ndarray, observed: int, alpha: float) -> NullTail:
    sums = np.zeros(1, dtype=np.int64)
    for x in q.tolist():
        sums = np.concatenate((sums + x, sums - x))
    values, counts = _distinct(np.abs(sums))
    return _from_distribution(values, counts / sums.size, observed, alpha, "exact sign-flip")


def _convolved(q: np.ndarray, observed: int, alpha: float) -> NullTail | None:
    """The exact null distribution on a coarse grid (hit@k, precision@k), or None when
    the grid is too fine for it to be cheap."""
    size = np.abs(q)
    step = int(np.gcd.reduce(size))
    units, counts = _distinct(size // step)
    span = int((units * counts).sum())
    order = np.argsort(-counts, kind="stable")
    cost = (2 * span + 1) * int(sum(counts[i] + 1 for i in order[1:]))
    if cost > _CONVOLVE_COST:
        return None
    dist = np.zeros(2 * span + 1)  # index: S / step + span
    u0, c0 = int(units[order[0]]), int(counts[order[0]])
    dist[span + u0 * (2 * np.arange(c0 + 1) - c0)] = _binomial_pmf(c0)
    for i in order[1:]:
        u, c = int(units[i]), int(counts[i])
        out = np.zeros_like(dist)
        for j, pj in enumerate(_binomial_pmf(c).tolist()):
            shift = u * (2 * j - c)
            if shift >= 0:
                out[shift:] += pj * dist[:dist.size - shift]
            else:
                out[:shift] += pj * dist[-shift:]
        dist = out
    absolute = dist[span:].copy()
    absolute[1:] += dist[:span][::-1]
    values = np.arange(span + 1, dtype=np.int64)
    live = absolute > 0
    found = _from_distribution(values[live], absolute[live], observed // step, alpha,
                               "exact sign-flip")
    return replace(found, accepted=found.accepted * step)  # back to grid units


def _drawn(q: np.ndarray, observed: int, alpha: float, rng: np.random.Generator,
           draws: int) -> NullTail:
    signs = rng.integers(0, 2, size=(draws, q.size), dtype=np.int64) * 2 - 1
    flipped = np.sort(np.abs(signs @ q))  # integer matmul: exact, no BLAS
    def at_least(t):
        return draws - np.searchsorted(flipped, t, side="left")
    # p = (1 + #{|S*| >= |S|}) / (draws + 1): the observed pattern counts as one of them
    p = (1 + int(at_least(observed))) / (draws + 1)
    ok = (1 + at_least(flipped)) >= alpha * (draws + 1)
    accepted = float(flipped[np.flatnonzero(ok)[-1]]) if ok.any() else 0.0
    return NullTail(p, accepted, f"sign-flip, {draws:,} draws")


def _normal(q: np.ndarray, observed: int, alpha: float) -> NullTail:
    spread = math.sqrt(float(np.sum(q.astype(np.float64) ** 2)))
    p = math.erfc(observed / (spread * math.sqrt(2.0)))
    accepted = z_two_sided(alpha) * spread
    # one rule on both sides of the boundary: the p-value follows the interval
    if observed > accepted:
        p = min(p, math.nextafter(alpha, 0.0))
    else:
        p = max(p, alpha)
    return NullTail(p, accepted, "sign-flip, normal")


def sign_flip(q: np.ndarray, alpha: float = ALPHA, rng: np.random.Generator | None = None,
              draws: int = DRAWS) -> NullTail:
    """The two-sided sign-flip test of ``q`` (int64 grid units, zeros allowed)."""
    q = q[q != 0]
    observed = abs(int(q.sum()))
    if q.size == 0:
        return NullTail(1.0, 0.0, "exact sign-flip")
    if q.size <= ENUMERATE_MAX:
        return _enumerated(q, observed, alpha)
    exact = _convolved(q, observed, alpha)
    if exact is not None:
        return exact
    if q.size <= MC_MAX:
        return _drawn(q, observed, alpha, rng or np.random.default_rng(SEED), draws)
    return _normal(q, observed, alpha)


def tango_z(gained: int, lost: int, n: int, delta: float) -> float:
    """Tango's score statistic for "head's share minus base's is ``delta``" on ``n`` paired
    0/1 values of which ``gained`` went 0 -> 1 and ``lost`` 1 -> 0 (Tango 1998, eq. 3):
    ``(gained - lost - n delta) / sqrt(n (2 p + delta - delta**2))``, ``p`` the lost
    share's maximum-likelihood estimate under ``delta``, the root of
    ``2n p**2 + (-(g + l) + (2n - g + l) delta) p - l delta (1 - delta) = 0`` (set the
    derivative of ``l log p + g log(p + delta) + rest log(1 - 2p - delta)`` to zero). For a
    negative ``delta`` gained and lost swap places (the statistic changes sign), so the
    root taken is always the one with ``C <= 0``: exactly one is non-negative."""
    if delta < 0:
        return -tango_z(lost, gained, n, -delta)
    g, l = float(gained), float(lost)
    a = 2.0 * n
    b = -(g + l) + (2.0 * n - g + l) * delta
    c = -l * delta * (1.0 - delta)
    p = (-b + math.sqrt(max(b * b - 4.0 * a * c, 0.0))) / (2.0 * a)
    spread = n * (2.0 * p + delta - delta * delta)
    top = g - l - n * delta
    if spread <= 1e-300:  # delta at an end of [-1, 1], or no discordant question at 0
        return 0.0 if abs(top) < 1e-9 else math.copysign(math.inf, top)
    return top / math.sqrt(spread)


def _ends(accepts, estimate: float, low: float, high: float, zero: bool | None,
          steps: int) -> tuple[float, float]:
    """The interval ``{x in [low, high]: accepts(x)}`` around ``estimate`` (accepted), each
    end by bisection. ``zero``: the test's own decision at 0, which the interval must
    follow exactly (True: accepted), so the search for the end on zero's side starts at 0
    when 0 is accepted and stops short of it when it is not."""
    def search(inside: float, outside: float, known_out: bool) -> float:
        if not known_out and accepts(outside):
            return outside
        for _ in range(steps):
            middle = (inside + outside) / 2.0
            if accepts(middle):
                inside = middle
            else:
                outside = middle
        return inside

    lower_from, lower_edge, upper_from, upper_edge = estimate, low, estimate, high
    lower_out = upper_out = False
    if zero is not None and estimate < 0:
        upper_from, upper_edge, upper_out = (0.0, high, False) if zero else (estimate, 0.0, True)
    elif zero is not None and estimate > 0:
        lower_from, lower_edge, lower_out = (0.0, low, False) if zero else (estimate, 0.0, True)
    return (search(lower_from, lower_edge, lower_out),
            search(upper_from, upper_edge, upper_out))


def tango_test(gained: int, lost: int, n: int, alpha: float = ALPHA, interval: bool = True
               ) -> tuple[float, float, float, bool]:
    """``(p, low, high, significant)``: Tango's score test of no change (McNemar's statistic
    ``(gained - lost) / sqrt(gained + lost)`` against the normal) and his score interval, the
    ``delta`` in [-1, 1] with ``|tango_z| <= z_{alpha/2}``. Zero is outside the interval
    exactly when ``p < alpha``: both come from the one statistic at 0."""
    z = z_two_sided(alpha)
    moved = gained + lost
    at_zero = 0.0 if moved == 0 else (gained - lost) / math.sqrt(moved)
    significant = abs(at_zero) > z
    p = math.erfc(abs(at_zero) / math.sqrt(2.0))
    # one rule on both sides of the boundary: the p-value follows the decision
    p = min(p, math.nextafter(alpha, 0.0)) if significant else max(p, alpha)
    low = high = math.nan  # ``interval=False``: the decision alone
    if interval:
        low, high = _ends(lambda x: abs(tango_z(gained, lost, n, x)) <= z, (gained - lost) / n,
                          -1.0, 1.0, not significant, 32)
    return min(p, 1.0), low, high, significant


def _flips(q: np.ndarray, rng: np.random.Generator, draws: int) -> tuple[np.ndarray, np.ndarray]:
    """Sign patterns over ``q``'s positions as two vectors, ``A @ q`` and ``A @ 1``, so the
    flipped sums of the shifted values ``q - t`` are ``A @ q - t * (A @ 1)`` for any ``t``:
    every pattern up to ``ENUMERATE_MAX`` values, ``draws`` random ones beyond."""
    if q.size <= ENUMERATE_MAX:
        sums, counts = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        for x in q.tolist():
            sums = np.concatenate((sums + x, sums - x))
            counts = np.concatenate((counts + 1, counts - 1))
        return sums, counts
    signs = rng.integers(0, 2, size=(draws, q.size), dtype=np.int64) * 2 - 1
    return signs @ q, signs.sum(axis=1)


def sign_flip_interval(q: np.ndarray, alpha: float, zero: bool,
                       rng: np.random.Generator | None = None, draws: int = DRAWS
                       ) -> tuple[float, float]:
    """The sign-flip test inverted: every ``t`` (grid units, within [-GRID, GRID], the
    differences two metrics in [0, 1] can have) for which the test of ``q - t`` over all
    ``n`` questions does not reject at ``alpha``, as ``(low, high)`` in grid units.
    ``zero``: the test's decision at ``t = 0`` (``sign_flip``), which the interval follows.
    Exact for up to ``ENUMERATE_MAX`` questions, ``draws`` random sign patterns up to
    ``MC_MAX`` (the p-value counting the observed pattern), the normal limit beyond."""
    n = int(q.size)
    total = int(q.sum())
    if n > MC_MAX:
        z2 = z_two_sided(alpha) ** 2
        s, s2 = float(total), float(np.sum(q.astype(np.float64) ** 2))

        def accepts(t: float) -> bool:
            return (s - n * t) ** 2 <= z2 * (s2 - 2.0 * t * s + n * t * t)
    else:
        flipped, count = _flips(q, rng or np.random.default_rng(SEED), draws)
        exact = n <= ENUMERATE_MAX
        patterns = flipped.size

        def accepts(t: float) -> bool:
            u = int(round(t))
            observed = abs(total - n * u)
            extreme = int(np.count_nonzero(np.abs(flipped - u * count) >= observed))
            if exact:
                return extreme >= alpha * patterns
            return 1 + extreme >= alpha * (patterns + 1)
    return _ends(accepts, total / n, -float(GRID), float(GRID), zero, 26)


def drop_p(q: np.ndarray, null: NullTail) -> float:
    """The one-sided p-value for a drop from the two-sided sign-flip test of ``q``: the null
    is symmetric, so for ``S < 0`` the lower tail ``P(S* <= S)`` is half of
    ``P(|S*| >= |S|)`` (exact on the exact paths; Phi(S / spread) in the normal limit). A
    rise or no change is 1: it is no evidence of a drop."""
    q = q[q != 0]
    total = int(q.sum())
    if total >= 0:
        return 1.0
    if null.method == "sign-flip, normal":
        spread = math.sqrt(float(np.sum(q.astype(np.float64) ** 2)))
        return 0.5 * math.erfc(-total / (spread * math.sqrt(2.0)))
    return min(1.0, null.p_value / 2.0)


EXACT_POWER_MAX = 400  # questions up to which a binary metric's power is summed exactly


def _log_choose(n: int) -> np.ndarray:
    """``log C(m, j)`` for ``0 <= j <= m <= n`` (``-inf`` where ``j > m``)."""
    lf = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))))
    m = np.arange(n + 1)[:, None]
    j = np.arange(n + 1)[None, :]
    with np.errstate(invalid="ignore"):
        out = lf[m] - lf[j] - lf[np.clip(m - j, 0, None)]
    return np.where(j <= m, out, -np.inf)


def _mcnemar_critical(n: int, alpha: float) -> np.ndarray:
    """For ``m = 0..n`` discordant questions, the fewest lost (of ``m``) that the exact
    McNemar test calls significant: the smallest ``L > m/2`` with ``2 P(X >= L) < alpha``,
    ``X ~ Binomial(m, 1/2)`` (``m + 1`` when none is)."""
    out = np.empty(n + 1, dtype=np.int64)
    for m in range(n + 1):
        tail = np.cumsum(_binomial_pmf(m)[::-1])[::-1]  # P(X >= L), L = 0..m
        ok = np.flatnonzero((2 * tail < alpha) & (2 * np.arange(m + 1) > m))
        out[m] = int(ok[0]) if ok.size else m + 1
    return out


def _mcnemar_power(n: int, v: float, delta: float, rejecting: np.ndarray, rest: np.ndarray,
                   log_choose_n: np.ndarray) -> float:
    """Power of the exact McNemar test on ``n`` questions when a drop ``delta`` joins the
    no-change discordance ``v`` (the model of ``mdc``): ``M ~ Binomial(n, v + delta)``
    discordant questions, each one lost with probability ``(v + 2 delta) / (2 (v + delta))``;
    summed over ``M`` exactly. ``rejecting[m, j]`` is ``log C(m, j)`` where ``j`` lost of
    ``m`` is significant and ``-inf`` elsewhere, ``rest[m, j]`` is ``m - j``, and
    ``log_choose_n`` is ``log C(n, m)``: what does not depend on ``delta``, made once per
    bisection (``_exact_binary_mdc``)."""
    s = min(v + delta, 1.0)
    if s <= 0.0:
        return 0.0
    lost = min((v + 2.0 * delta) / (2.0 * s), 1.0)
    ms = np.arange(n + 1)

    def log_binomial(count: np.ndarray, trials: np.ndarray, p: float) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(count > 0, count * np.log(p) if p > 0 else -np.inf, 0.0)
            b = np.where(trials - count > 0,
                         (trials - count) * np.log1p(-p) if p < 1 else -np.inf, 0.0)
        return a + b

    p_m = np.exp(log_choose_n + log_binomial(ms, np.full_like(ms, n), s))
    if lost >= 1.0:  # every discordant question lost: P(j = m) = 1
        inner = np.exp(np.diagonal(rejecting))
    else:
        # j log(lost) + (m - j) log(1 - lost), added to the masked log C(m, j) in one pass
        inner = np.exp(rejecting + (ms * np.log(lost) + rest * np.log1p(-lost))).sum(axis=1)
    return float(np.sum(p_m * inner))


def _exact_binary_mdc(n: int, v: float, alpha: float) -> float:
    """The drop of a binary metric the exact McNemar test detects with ``POWER`` on ``n``
    questions at no-change discordance ``v``, by bisection (1 when no drop reaches it)."""
    log_choose = _log_choose(n)
    critical = _mcnemar_critical(n, alpha)
    ms = np.arange(n + 1)
    significant = (ms[None, :] >= critical[:, None]) & (ms[None, :] <= ms[:, None])
    rejecting = np.where(significant, log_choose, -np.inf)
    rest = (ms[:, None] - ms[None, :]).astype(np.float64)
    terms = (rejecting, rest, log_choose[n])
    low, high = 0.0, 1.0 - v
    if high <= 0.0 or _mcnemar_power(n, v, high, *terms) < POWER:
        return 1.0
    for _ in range(40):
        middle = (low + high) / 2.0
        if _mcnemar_power(n, v, middle, *terms) >= POWER:
            high = middle
        else:
            low = middle
    return high


def mdc(deltas: np.ndarray, head: np.ndarray, binary: bool, alpha: float = ALPHA) -> float:
    """Minimum detectable change of the mean delta for ``n = len(deltas)`` questions: the
    change the test detects with 80 % power at level ``alpha`` (the family's: ``alpha / K``
    for ``K`` tests bounds what Holm's step-down needs).

    The test rejects when ``|mean| > z_a * sqrt(v / n)``, ``v = mean(d**2)`` over every
    shared question (the sign-flip null's spread). A change ``delta`` made of questions
    moving by ``u`` each (``u`` their mean ``|d|``; 1 for a binary metric) adds
    ``delta * u`` to ``v`` and leaves the deltas' variance ``v + delta * u - delta**2``, so
    the MDC is the ``delta`` that solves
    ``delta = z_a * sqrt((v + delta*u) / n) + z_0.8 * sqrt((v + delta*u - delta**2) / n)``
    (McNemar's power for hit@k). It is never below ``m * u / n``,
    ``m = min_one_sided_flips(alpha)``: fewer moved questions are never significant. When
    no question moved, ``v`` is unknown; the variance of the head values stands in (the
    paired spread at a between-run correlation of 0.5) and ``u`` is 1. Metrics live in
    [0, 1], so the MDC is capped at 1.
    """
    n = int(deltas.size)
    if n == 0:
        return math.inf
    za, zb = z_two_sided(alpha), Z_POWER
    moved = deltas[deltas != 0]
    v = float(np.mean(deltas ** 2))
    if moved.size == 0 and not binary:
        v = float(np.var(head, ddof=1)) if n > 1 else 0.0
    u = 1.0 if binary or moved.size == 0 else float(np.mean(np.abs(moved)))
    if binary and n <= EXACT_POWER_MAX:
        # on few questions the normal equation misses a binary metric's MDC either way
        # (power 0.76 at alpha on 40, 0.86-0.90 at alpha/K): its power is summed exactly
        value = _exact_binary_mdc(n, v, alpha)
    else:
        value = 1.0
        for _ in range(200):  # from above: the largest root (0 is one too when v is 0)
            spread = v + value * u
            step = (za * math.sqrt(spread / n)
                    + zb * math.sqrt(max(spread - value * value, 0.0) / n))
            if abs(step - value) < 1e-12:
                break
            value = step
    value = max(value, min_one_sided_flips(alpha) * u / n)
    return min(value, 1.0)


def _stream(seed: int, metric: str) -> np.random.Generator:
    # One stream per metric name: adding a metric leaves the others' draws unchanged.
    return np.random.Generator(np.random.PCG64([seed, zlib.crc32(metric.encode("utf-8"))]))


def _row_test(q: np.ndarray, scale: float | None, null: NullTail, alpha: float,
              rng: np.random.Generator, draws: int, interval: bool) -> tuple:
    """A row's ``(p, low, high, significant, method)`` from one procedure: Tango's for a
    share (``scale`` times a 0/1 value), else the sign-flip test ``null`` and its inversion."""
    if scale is not None:
        p, low, high, significant = tango_test(int(np.count_nonzero(q > 0)),
                                               int(np.count_nonzero(q < 0)), q.size, alpha, interval)
        return p, low * scale, high * scale, significant, "Tango score"
    significant = abs(int(q.sum())) > null.accepted
    low, high = ((x / GRID for x in sign_flip_interval(q, alpha, not significant, rng, draws))
                 if interval else (math.nan, math.nan))
    return null.p_value, low, high, significant, null.method


def paired_test(
    metric: str,
    base: np.ndarray,
    head: np.ndarray,
    *,
    seed: int = SEED,
    draws: int = DRAWS,
    alpha: float = ALPHA,
    with_mdc: bool = True,
    ties: np.ndarray | None = None,
    with_interval: bool = True,
) -> PairedTest:
    """Compare one metric on paired per-question values (same question order on both), a
    family of one (``holm`` corrects a family). ``with_mdc=False`` leaves ``mdc`` NaN: on
    a binary metric it is the dear part (the exact power sum, about 0.1 s at 400 questions);
    ``with_interval=False`` leaves the interval NaN (the gate's decisions never read it).

    A metric that is 0 or one value ``c`` on every question of both runs (``share_scale``) gets
    Tango's score test and interval (``tango_test``, the interval times ``c``), any other the
    sign-flip test and its inversion
    (``sign_flip``, ``sign_flip_interval``); ``p_drop`` is the exact one-sided sign-flip
    test for a drop in either case (``drop_p``).

    ``ties``: a mask of the questions whose change the test counts as none, because the
    retriever alone moved their outcome between identical passes (``run --repeat``): what
    such a question did in this run could be its own noise. The means, ``delta``, ``lost``
    and ``gained`` still count every question; the p-values, the decision and the interval
    come from the others' changes (the interval is then around the change they made)."""
    base = np.asarray(base, dtype=np.float64)
    head = np.asarray(head, dtype=np.float64)
    if base.shape != head.shape or base.ndim != 1:
        raise ValueError("base and head must be 1-D arrays of the same length")
    n = int(base.size)
    if n == 0:
        return PairedTest(metric, 0, math.nan, math.nan, 0.0, 0.0, 0.0, None, 0, 0,
                          math.inf, False, "none")
    d = head - base
    q = on_grid(d)
    lost = int(np.count_nonzero(q < 0))
    gained = int(np.count_nonzero(q > 0))
    total = int(q.sum())
    delta = total / (GRID * n)  # the exact grid sum: the sign of a zero is never noise
    tied = 0
    if ties is not None and ties.any():
        tied = int(np.count_nonzero(ties & (q != 0)))
        d, q = np.where(ties, 0.0, d), np.where(ties, 0, q)
    rng = _stream(seed, metric)
    null = sign_flip(q, alpha, rng, draws)
    binary = zero_one(metric, base, head)
    p, low, high, significant, method = _row_test(q, share_scale(base, head), null, alpha, rng,
                                                  draws, with_interval)
    return PairedTest(
        metric=metric, n=n, base_mean=float(base.mean()), head_mean=float(head.mean()),
        delta=delta, ci_low=low, ci_high=high, p_value=p,
        lost=lost, gained=gained,
        mdc=mdc(d, head, binary, alpha) if with_mdc else math.nan,
        significant=significant, method=method, raw_significant=significant,
        p_adjusted=p, ties=tied, p_drop=drop_p(q, null),
    )


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given): the ``j``-th smallest is
    ``max_{i <= j} min(1, (K - i + 1) * p_(i))``. Rejecting where the adjusted value is
    below ``alpha`` keeps the chance of any false "significant" in the family below
    ``alpha``, whatever the dependence between the tests."""
    k = len(p_values)
    order = sorted(range(k), key=lambda i: p_values[i])
    out = [1.0] * k
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * p_values[i]))
        out[i] = running
    return out


def corrected(tests: dict, *, seed: int = SEED, alpha: float = ALPHA,
              values: dict | None = None) -> dict:
    """The family ``{key: PairedTest}`` with Holm's correction applied: each test's
    ``significant`` is its corrected decision, ``mdc`` is at the level ``alpha / K``
    (``values``: ``{key: (metric, base, head)}`` to compute it from)."""
    live = [key for key, t in tests.items() if t.p_value is not None]
    k = len(live)
    if k == 0:
        return dict(tests)
    adjusted = dict(zip(live, holm([tests[key].p_value for key in live])))
    out = dict(tests)
    for key in live:
        t = tests[key]
        change = {"p_adjusted": adjusted[key], "family": k,
                  "significant": adjusted[key] < alpha and t.raw_significant}
        if values is not None:
            metric, b, h = values[key]
            change["mdc"] = mdc(np.asarray(h, float) - np.asarray(b, float), np.asarray(h, float),
                                zero_one(metric, b, h), alpha / k)
        out[key] = replace(t, **change)
    return out


def paired_tests(
    paired: dict[str, tuple[np.ndarray, np.ndarray]], *, seed: int = SEED,
    draws: int = DRAWS, alpha: float = ALPHA, with_mdc: bool = True,
    ties: np.ndarray | None = None, with_interval: bool = True,
) -> dict[str, PairedTest]:
    """``paired_test`` for each metric of ``{metric: (base_values, head_values)}``, the
    metrics one family (``corrected``). The MDC is computed once, at the family's level
    (``with_mdc=False``: not at all); ``ties`` and ``with_interval`` as in ``paired_test``."""
    raw = {name: paired_test(name, b, h, seed=seed, draws=draws, alpha=alpha, with_mdc=False, ties=ties,
                             with_interval=with_interval)
           for name, (b, h) in paired.items()}
    def tested(b, h):  # what the test sees: a tied question's head is its base
        return h if ties is None or not ties.any() else np.where(ties, b, h)

    values = {name: (name, b, tested(b, h)) for name, (b, h) in paired.items()} if with_mdc else None
    return corrected(raw, seed=seed, alpha=alpha, values=values)


def mean(values) -> float | None:
    """The one mean of the comparison: exact summation (``math.fsum``), None when empty."""
    values = list(values)
    return math.fsum(values) / len(values) if values else None


def min_shared_questions(alpha: float = ALPHA) -> int:
    """Fewest shared questions a comparison needs: below ``min_one_sided_flips`` (6 at
    alpha 0.05) the sign-flip test can call no change of any metric significant, so a
    comparison on fewer questions would let any drop through under
    ``regressions = "significant"``."""
    return min_one_sided_flips(alpha)
