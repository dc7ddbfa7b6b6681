"""Paired tests: exact McNemar, a deterministic bootstrap, the minimum detectable change."""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.stats import (
    ALPHA,
    Z_ALPHA,
    Z_POWER,
    bootstrap_means,
    mcnemar_exact,
    mdc,
    min_one_sided_flips,
    paired_test,
    paired_tests,
    quantiles,
)


def _two_sided(b: int, c: int) -> float:
    n = b + c
    return min(1.0, float(Fraction(2 * sum(comb(n, i) for i in range(min(b, c) + 1)), 2 ** n)))


@pytest.mark.parametrize("lost, gained", [(0, 6), (6, 0), (10, 2), (2, 10), (7, 4), (1, 1)])
def test_mcnemar_matches_the_binomial_tail(lost, gained):
    assert mcnemar_exact(lost, gained) == pytest.approx(_two_sided(lost, gained), rel=1e-12)


def test_mcnemar_small_cases_by_hand():
    assert mcnemar_exact(0, 6) == 2 / 2 ** 6
    assert mcnemar_exact(10, 2) == 2 * (1 + 12 + 66) / 2 ** 12
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0


def test_mcnemar_stays_exact_for_thousands_of_discordant_pairs():
    b, c = 1500, 1650
    assert mcnemar_exact(b, c) == pytest.approx(_two_sided(b, c), rel=1e-12)
    assert 0.0 < mcnemar_exact(b, c) < 0.01
    assert mcnemar_exact(0, 5000) == 0.0 or mcnemar_exact(0, 5000) < 1e-300


def test_fewest_flips_that_can_be_significant():
    m = min_one_sided_flips(ALPHA)
    assert 2 / 2 ** m < ALPHA <= 2 / 2 ** (m - 1)
    assert m == 6


def _hits(n: int, lost: int, gained: int):
    """n questions: ``lost`` go 1 -> 0, ``gained`` go 0 -> 1, the rest stay 1."""
    base = np.ones(n)
    head = np.ones(n)
    head[:lost] = 0
    base[lost:lost + gained] = 0
    return base, head


def test_a_constructed_regression_is_significant_and_the_interval_holds_the_delta():
    base, head = _hits(40, lost=10, gained=0)
    t = paired_test("hit@5", base, head)
    true_delta = -10 / 40
    assert t.delta == pytest.approx(true_delta)
    assert t.ci_low <= true_delta <= t.ci_high
    assert t.ci_high < 0
    assert t.p_value == pytest.approx(2 / 2 ** 10)
    assert t.significant and t.lost == 10 and t.gained == 0


def test_a_balanced_change_is_within_noise():
    base, head = _hits(40, lost=3, gained=2)
    t = paired_test("hit@5", base, head)
    assert t.p_value == pytest.approx(_two_sided(3, 2))
    assert not t.significant
    assert t.ci_low < 0 < t.ci_high


def test_graded_metric_uses_the_interval():
    rng = np.random.default_rng(7)
    base = rng.random(200)
    head = base - 0.1 + rng.normal(0, 0.05, 200)  # many distinct deltas: the sparse sampler
    t = paired_test("mrr", np.clip(base, 0, 1), np.clip(head, 0, 1))
    assert t.p_value is None and t.method == "bootstrap"
    assert t.ci_low <= t.delta <= t.ci_high < 0
    assert t.significant


def test_no_change_has_an_empty_interval_and_is_not_significant():
    v = np.array([1.0, 0.5, 0.0, 0.25])
    t = paired_test("mrr", v, v.copy())
    assert (t.ci_low, t.ci_high, t.delta) == (0.0, 0.0, 0.0)
    assert not t.significant


def test_bootstrap_is_deterministic_and_per_metric():
    base, head = _hits(50, lost=6, gained=2)
    first = paired_tests({"hit@5": (base, head), "recall@5": (base, head)})
    again = paired_tests({"hit@5": (base, head), "recall@5": (base, head)})
    assert first == again
    alone = paired_test("recall@5", base, head)
    assert alone == first["recall@5"]  # another metric's presence changes nothing


@pytest.mark.parametrize("distinct", [3, 400])
def test_both_samplers_reproduce_the_bootstrap_distribution(distinct):
    rng = np.random.default_rng(11)
    n = 500
    d = rng.choice(np.linspace(-1, 1, distinct), size=n)
    d[: n // 2] = 0.0  # half unchanged, as in a real diff
    means = bootstrap_means(d, np.random.Generator(np.random.PCG64(1)), 20_000)
    # E[mean*] = mean(d); SD[mean*] = population SD(d) / sqrt(n)
    se = d.std(ddof=0) / math.sqrt(n)
    assert means.mean() == pytest.approx(d.mean(), abs=4 * se / math.sqrt(20_000))
    assert means.std() == pytest.approx(se, rel=0.05)


def test_mdc_binary_never_below_the_fewest_significant_flips():
    base, head = _hits(40, 0, 0)
    assert mdc(head - base, head, binary=True) == min_one_sided_flips() / 40


def test_mdc_graded_follows_the_paired_sd():
    d = np.array([0.1, -0.2, 0.0, 0.3, -0.1, 0.05])
    expected = (Z_ALPHA + Z_POWER) * np.std(d, ddof=1) / math.sqrt(d.size)
    assert mdc(d, np.zeros(6), binary=False) == pytest.approx(expected)


def test_5000_questions_6_metrics_in_one_call():
    # How fast is measured in benchmarks/bench_stats.py, not here: a timed assertion fails
    # on a loaded machine without saying anything about the code.
    rng = np.random.default_rng(3)
    n, depth = 5000, 15
    rb = rng.integers(0, depth + 1, size=n)  # first gold rank, 0 = not retrieved
    rh = np.where(rng.random(n) < 0.3, rng.integers(0, depth + 1, size=n), rb)

    def rr(r):
        return np.where(r > 0, 1.0 / np.maximum(r, 1), 0.0)

    def hit(r, k):
        return ((r > 0) & (r <= k)).astype(float)

    def ndcg1(r, k):
        return np.where((r > 0) & (r <= k), 1.0 / np.log2(np.maximum(r, 1) + 1), 0.0)

    paired = {"hit@5": (hit(rb, 5), hit(rh, 5)), "hit@15": (hit(rb, 15), hit(rh, 15)),
              "precision@5": (hit(rb, 5) / 5, hit(rh, 5) / 5), "mrr": (rr(rb), rr(rh)),
              "ndcg@5": (ndcg1(rb, 5), ndcg1(rh, 5)), "ndcg@15": (ndcg1(rb, 15), ndcg1(rh, 15))}
    out = paired_tests(paired)
    assert len(out) == 6 and all(t.n == n for t in out.values())
    for name, (b, h) in paired.items():
        assert out[name].delta == pytest.approx(float(np.mean(h - b)))
        assert out[name].ci_low <= out[name].delta <= out[name].ci_high


# Values as a bootstrap's means have them (many ties, both zeros) and the edges numpy's
# interpolation treats apart: one value, the infinities, probabilities 0 and 1.
_VALUE = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, math.inf, -math.inf]),
                   st.floats(allow_nan=False, width=64))
_PROBABILITY = st.one_of(st.sampled_from([0.0, 1.0, ALPHA / 2, 1 - ALPHA / 2, 0.5]),
                         st.floats(min_value=0.0, max_value=1.0))


@settings(max_examples=500, deadline=None)
@given(st.lists(_VALUE, min_size=1, max_size=60), st.lists(_PROBABILITY, min_size=1, max_size=4))
def test_the_interval_is_np_quantiles_to_the_bit(values, probabilities):
    values = np.array(values)
    before = values.copy()
    with np.errstate(invalid="ignore"):  # inf - inf, in both
        expected = np.quantile(values, probabilities)
        got = quantiles(values, probabilities)
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    assert values.tobytes() == before.tobytes()  # the input is not reordered


def test_the_interval_of_bootstrap_means_is_np_quantiles_to_the_bit():
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 10, 9_999, 10_000, 10_001):
        means = np.round(rng.normal(size=n), 2) * rng.choice([1.0, -1.0, 0.0], size=n)
        probabilities = [ALPHA / 2, 1 - ALPHA / 2]
        assert quantiles(means, probabilities).tobytes() == np.quantile(means, probabilities).tobytes()


def test_a_nan_among_the_values_is_left_to_numpy():
    values = np.array([0.5, math.nan, 0.25])
    assert np.isnan(quantiles(values, [0.5])).all() and np.isnan(np.quantile(values, [0.5])).all()
