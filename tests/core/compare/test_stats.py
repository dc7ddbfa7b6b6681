"""Paired tests: one sign-flip test per metric (exact McNemar for hit@k), integer decisions,
Holm's correction over a family, the minimum detectable change."""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.compare.stats import (
    ALPHA,
    EXACT_POWER_MAX,
    GRID,
    Z_ALPHA,
    Z_POWER,
    _drawn,
    _enumerated,
    holm,
    mcnemar_exact,
    mdc,
    min_one_sided_flips,
    on_grid,
    paired_test,
    paired_tests,
    sign_flip,
)
from ci_eval.core.textfmt import ci_text, small


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


def _score_p(lost: int, gained: int) -> float:
    """McNemar's score statistic against the normal, two-sided (Tango's test at zero)."""
    return math.erfc(abs(gained - lost) / math.sqrt(lost + gained) / math.sqrt(2))


def _lower_tail(lost: int, gained: int) -> float:
    """The exact one-sided McNemar p for a drop: P(X >= lost), X ~ Binomial(lost + gained, 1/2)."""
    n = lost + gained
    return float(Fraction(sum(comb(n, i) for i in range(lost, n + 1)), 2 ** n))


def test_a_constructed_regression_is_significant_and_the_interval_holds_the_delta():
    base, head = _hits(40, lost=10, gained=0)
    t = paired_test("hit@5", base, head)
    true_delta = -10 / 40
    assert t.delta == true_delta
    assert -1 <= t.ci_low <= true_delta <= t.ci_high < 0
    assert t.p_value == pytest.approx(_score_p(10, 0)) and t.method == "Tango score"
    assert t.p_drop == 1 / 2 ** 10  # the gate's exact one-sided test
    assert t.significant and t.lost == 10 and t.gained == 0


def test_a_balanced_change_is_within_noise():
    base, head = _hits(40, lost=3, gained=2)
    t = paired_test("hit@5", base, head)
    assert t.p_value == pytest.approx(_score_p(3, 2))
    assert not t.significant
    assert t.ci_low < 0 < t.ci_high


@pytest.mark.parametrize("lost, gained", [(10, 2), (7, 4), (0, 6), (30, 50), (400, 330)])
def test_for_hit_at_k_the_row_is_tangos_score_test_and_the_drop_is_exact_mcnemar(lost, gained):
    base, head = _hits(lost + gained + 20, lost, gained)
    t = paired_test("hit@5", base, head)
    assert t.method == "Tango score"
    significant = abs(gained - lost) / math.sqrt(lost + gained) > Z_ALPHA
    if significant:
        assert t.p_value == pytest.approx(_score_p(lost, gained), rel=1e-9)
    assert t.significant == significant
    expected = _lower_tail(lost, gained) if lost > gained else 1.0
    assert t.p_drop == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_four_moved_of_a_hundred_are_never_significant_by_the_sign_flip_test():
    # 100 questions at rank 1, 4 moved to rank 2: every sign pattern of the 4 moved
    # deltas is as likely under "no change"; the observed one and its mirror are the two
    # most extreme of 16, p = 2/16, whatever the metric's per-question values
    base, head = np.ones(100), np.ones(100)
    head[:4] = 0.5  # reciprocal rank 1 -> 1/2
    for name in ("mrr", "ndcg@5", "map"):
        t = paired_test(name, base, head)
        assert t.p_value == 2 / 2 ** 4 and not t.significant
        assert t.ci_low < 0 <= t.ci_high
        assert t.p_drop == 1 / 2 ** 4


def test_three_moved_of_six_are_not_significant():
    base, head = np.ones(6), np.ones(6)
    head[:3] = 0.5
    t = paired_test("mrr", base, head)
    assert t.p_value == 2 / 2 ** 3 and not t.significant
    assert -1 <= t.ci_low < 0 <= t.ci_high <= 1


def test_six_questions_that_all_lose_their_gold_chunk_stay_inside_minus_one():
    # the calibration case: hit@5 1.000 -> 0.000 on the documented minimum of 6 questions
    base, head = np.ones(6), np.zeros(6)
    t = paired_test("hit@5", base, head)
    assert t.delta == -1.0 and t.ci_low == -1.0 and -1.0 < t.ci_high < 0
    assert t.p_value == pytest.approx(_score_p(6, 0)) and t.significant
    assert t.p_drop == 1 / 2 ** 6
    assert ci_text(t).startswith("[-1.000, ")


def test_a_decision_at_zero_is_integer_arithmetic():
    # 40 questions: 8 go rank 1 -> absent, 2 absent -> rank 1, 30 stay at rank 3. In
    # floating point the mean precision@5 delta is not -0.03 and the old interval's upper
    # end came out -1.39e-18; on the grid the sum is exact
    base = np.r_[np.full(8, 0.2), np.zeros(2), np.full(30, 0.2)]
    head = np.r_[np.zeros(8), np.full(2, 0.2), np.full(30, 0.2)]
    p5 = paired_test("precision@5", base, head)
    r5 = paired_test("recall@5", base * 5, head * 5)
    assert int(on_grid(head - base).sum()) == -6 * GRID // 5  # (-8 + 2) questions x 0.2
    assert p5.delta == (-6 * GRID // 5) / (40 * GRID)
    # the test is scale-free: precision@5 (0 or 1/5) and recall@5 (0 or 1) are one share
    assert p5.p_value == r5.p_value == pytest.approx(_score_p(8, 2))
    assert p5.method == r5.method == "Tango score"
    assert (p5.ci_low * 5, p5.ci_high * 5) == pytest.approx((r5.ci_low, r5.ci_high))
    # graded values get the sign-flip test: 8 down by 0.2 and 2 up by 0.2 is McNemar's count
    g = paired_test("ndcg@5", np.r_[np.full(8, 0.2), np.full(2, 0.1), np.full(30, 0.2)],
                    np.r_[np.zeros(8), np.full(2, 0.3), np.full(30, 0.2)])
    assert g.p_value == _two_sided(8, 2) and g.method == "exact sign-flip"
    assert not p5.significant and not r5.significant
    assert p5.ci_high >= 0 and r5.ci_high >= 0
    # deltas that cancel exactly are no change, though their float sum is 5.6e-17
    d = np.array([0.1, 0.2, -0.3])
    assert float(np.sum(d)) != 0.0
    t = paired_test("mrr", np.zeros(3) + 0.5, 0.5 + d)
    assert t.delta == 0.0 and t.direction == "flat" and t.p_value == 1.0


_DELTAS = st.lists(st.one_of(st.sampled_from([0.0, 0.0, 0.2, -0.2, 0.4, -1.0, 1.0, 0.5, -1 / 3]),
                             st.floats(min_value=-1, max_value=1)), min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(_DELTAS)
def test_mark_interval_and_p_value_always_agree(deltas):
    d = np.array(deltas)
    base = np.clip(0.5 - d / 2, 0, 1)
    head = np.clip(base + d, 0, 1)
    for name in ("mrr", "hit@5"):
        h = head if name == "mrr" else (head > 0.5).astype(float)
        b = base if name == "mrr" else (base > 0.5).astype(float)
        t = paired_test(name, b, h)
        off_zero = t.ci_low > 0 or t.ci_high < 0
        assert t.significant == off_zero == (t.p_value < ALPHA)
        assert t.ci_low <= t.delta <= t.ci_high


def test_every_pattern_and_the_grid_convolution_give_one_distribution():
    rng = np.random.default_rng(5)
    for _ in range(20):
        q = on_grid(rng.choice([-0.4, -0.2, 0.2, 0.6, 1.0], size=14))
        exact = _enumerated(q, abs(int(q.sum())), ALPHA)
        # the same deltas past the enumeration's range go through the convolution
        big = np.tile(q, 2)
        via_grid = sign_flip(big)
        enumerated_big = _enumerated(big[:16], abs(int(big[:16].sum())), ALPHA)
        assert via_grid.method == "exact sign-flip"
        assert sign_flip(q).p_value == pytest.approx(exact.p_value, rel=1e-9)
        assert 0 <= enumerated_big.p_value <= 1


def test_random_patterns_estimate_the_exact_p_value():
    rng = np.random.default_rng(9)
    q = on_grid(rng.normal(-0.05, 0.2, size=14))
    exact = _enumerated(q, abs(int(q.sum())), ALPHA)
    drawn = _drawn(q, abs(int(q.sum())), ALPHA, np.random.default_rng(1), 20_000)
    se = math.sqrt(exact.p_value * (1 - exact.p_value) / 20_000)
    assert drawn.p_value == pytest.approx(exact.p_value, abs=5 * se + 1 / 20_000)


def test_holm_by_hand():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]
    # sorted 0.001, 0.2, 0.8, 0.9 times 4, 3, 2, 1, capped at 1, never below an earlier one
    assert holm([0.2, 0.9, 0.001, 0.8]) == pytest.approx([0.6, 1.0, 0.004, 1.0])


def test_a_family_is_corrected_and_keeps_the_raw_interval():
    base, head = _hits(40, lost=6, gained=0)  # score p = erfc(sqrt(3)) for each of the three
    raw = paired_test("hit@5", base, head)
    out = paired_tests({"hit@5": (base, head), "recall@5": (base, head), "mrr": (base, head)})
    t = out["hit@5"]
    assert t.family == 3 and t.p_adjusted == pytest.approx(3 * math.erfc(math.sqrt(3)))
    assert t.significant and t.raw_significant  # 3 * 0.0143 = 0.043 < 0.05
    assert (t.ci_low, t.ci_high, t.p_value) == (raw.ci_low, raw.ci_high, raw.p_value)
    seven = paired_tests({f"m{i}": (base, head) for i in range(7)})
    assert all(x.raw_significant and not x.significant for x in seven.values())  # 7 * 0.0143


def test_no_change_is_not_significant_and_its_interval_is_what_the_questions_allow():
    # four unchanged questions: no sign pattern of four can reject (2/16), so every
    # difference in [-1, 1] is kept; eight: every shift leaves eight deltas of one sign,
    # 2/256, so only zero is
    v = np.array([1.0, 0.5, 0.0, 0.25])
    t = paired_test("mrr", v, v.copy())
    assert (t.ci_low, t.ci_high, t.delta) == (-1.0, 1.0, 0.0)
    assert not t.significant and t.p_value == 1.0
    v = np.tile(v, 2)
    t = paired_test("mrr", v, v.copy())
    assert t.ci_low == pytest.approx(0.0, abs=1e-9) and t.ci_high == pytest.approx(0.0, abs=1e-9)
    assert t.ci_low <= 0.0 <= t.ci_high and not t.significant and t.p_drop == 1.0


def test_tests_are_deterministic_and_per_metric():
    rng = np.random.default_rng(2)
    base = rng.random(120)
    head = np.clip(base + rng.normal(0, 0.1, 120) * (rng.random(120) < 0.5), 0, 1)
    first = paired_tests({"mrr": (base, head), "ndcg@5": (base, head)})
    again = paired_tests({"mrr": (base, head), "ndcg@5": (base, head)})
    assert first == again and first["mrr"].method == "sign-flip, 10,000 draws"
    alone = paired_test("mrr", base, head)
    assert (alone.p_value, alone.ci_low) == (first["mrr"].p_value, first["mrr"].ci_low)


def _power_equation(value, d, u, alpha):
    """``delta - (z_a sqrt((v + delta u)/n) + z_b sqrt((v + delta u - delta^2)/n))``."""
    n, v = d.size, float(np.mean(d ** 2))
    za = NormalDist().inv_cdf(1 - alpha / 2)
    spread = v + value * u
    return value - (za * math.sqrt(spread / n) + Z_POWER * math.sqrt((spread - value ** 2) / n))


def _mcnemar_power_by_enumeration(n, v, delta, alpha):
    """The exact McNemar test's power, every (discordant, lost) count enumerated with
    ``math.comb`` and decided by ``mcnemar_exact`` itself: ``M ~ Bin(n, v + delta)``
    discordant questions, each lost with probability ``(v + 2 delta) / (2 (v + delta))``."""
    s = v + delta
    q = (v + 2 * delta) / (2 * s)
    total = 0.0
    for m in range(n + 1):
        p_m = math.comb(n, m) * s ** m * (1 - s) ** (n - m)
        for lost in range(m + 1):
            if 2 * lost > m and mcnemar_exact(lost, m - lost) < alpha:
                total += p_m * math.comb(m, lost) * q ** lost * (1 - q) ** (m - lost)
    return total


def test_mdc_binary_is_the_drop_the_exact_mcnemar_test_detects_with_80_percent_power():
    base, head = _hits(40, 3, 2)
    d = head - base
    v = float(np.mean(d ** 2))
    for alpha in (ALPHA, ALPHA / 10):
        value = mdc(d, head, binary=True, alpha=alpha)
        assert _mcnemar_power_by_enumeration(40, v, value, alpha) >= 0.8
        assert _mcnemar_power_by_enumeration(40, v, value - 1e-3, alpha) < 0.8
        assert value >= min_one_sided_flips(alpha) / 40
    # nothing moved: still a positive drop, not the trivial 0
    same = np.ones(40)
    value = mdc(same - same, same, binary=True)
    assert value > min_one_sided_flips() / 40
    assert _mcnemar_power_by_enumeration(40, 0.0, value, ALPHA) >= 0.8


def test_mdc_binary_solves_mcnemars_power_equation_beyond_the_exact_range():
    n = EXACT_POWER_MAX + 100
    base, head = _hits(n, 3 * n // 40, 2 * n // 40)
    d = head - base
    for alpha in (ALPHA, ALPHA / 10):
        value = mdc(d, head, binary=True, alpha=alpha)
        assert _power_equation(value, d, 1.0, alpha) == pytest.approx(0.0, abs=1e-9)


def test_mdc_graded_follows_the_spread_and_the_moved_size():
    d = np.array([0.1, -0.2, 0.0, 0.3, -0.1, 0.05] * 10)
    u = float(np.mean(np.abs(d[d != 0])))
    value = mdc(d, np.zeros(d.size), binary=False)
    assert _power_equation(value, d, u, ALPHA) == pytest.approx(0.0, abs=1e-9)
    # at least the z-approximation on the paired SD it replaces
    assert value >= (Z_ALPHA + Z_POWER) * np.std(d) / math.sqrt(d.size)


def test_mdc_is_never_zero_when_differences_do_not_spread():
    same = np.ones(50)
    value = mdc(same - same, same, binary=False)
    # no spread anywhere: the change of whole questions moving (u = 1) this many detect
    assert _power_equation(value, same - same, 1.0, ALPHA) == pytest.approx(0.0, abs=1e-9)
    assert value >= min_one_sided_flips() / 50 and small(value) != "0.000"
    # every moved question by the same tiny amount: no spread, still a positive floor
    d = np.r_[np.full(10, 1e-5), np.zeros(40)]
    assert mdc(d, same, binary=False) >= min_one_sided_flips() * 1e-5 / 50 > 0
    assert small(1e-5) == "<0.001"


def test_an_interval_off_zero_never_reads_zero():
    class T:
        ci_low, ci_high = 2e-5, 0.024
    assert ci_text(T) == "[+2.0e-05, +0.024]"
    T.ci_low, T.ci_high = -0.040, 0.0
    assert ci_text(T) == "[-0.040, +0.000]"


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
    assert len(out) == 6 and all(t.n == n and t.family == 6 for t in out.values())
    for name, (b, h) in paired.items():
        assert out[name].delta == pytest.approx(float(np.mean(h - b)), abs=1e-9)
        assert out[name].ci_low <= out[name].delta <= out[name].ci_high


def test_tied_questions_count_in_the_means_but_not_in_the_test():
    # 12 questions: 6 lose a hit, 4 more lose one but flapped across repeated passes (ties),
    # 2 are steady hits, one of them also marked (a tie with no change counts for nothing).
    base = np.ones(12)
    head = np.array([0.0] * 10 + [1.0, 1.0])
    ties = np.array([False] * 6 + [True] * 4 + [False, True])
    plain = paired_test("hit@1", base, head)
    tied = paired_test("hit@1", base, head, ties=ties)
    assert (tied.base_mean, tied.head_mean, tied.delta, tied.lost, tied.gained) == (
        plain.base_mean, plain.head_mean, -10 / 12, 10, 0)
    assert tied.ties == 4 and plain.ties == 0
    assert plain.p_value == pytest.approx(_score_p(10, 0)) and plain.significant
    assert tied.p_value == pytest.approx(_score_p(6, 0)) and tied.p_value > plain.p_value
    assert (plain.p_drop, tied.p_drop) == (1 / 2 ** 10, 1 / 2 ** 6)
    # The interval is the tested change's: the six lost of twelve that did not flap.
    assert tied.ci_low < -6 / 12 < tied.ci_high < 0
    assert "ties" not in plain.as_dict() and tied.as_dict()["ties"] == 4
    family = paired_tests({"hit@1": (base, head)}, ties=ties)
    assert family["hit@1"].ties == 4 and family["hit@1"].p_value == tied.p_value


def _pair(n: int, seed: int, binary: bool, moved: float, bias: float):
    """``n`` paired values of one metric: a share ``moved`` of the questions change, going
    down with probability ``bias``; 0/1 values, or rank values (reciprocal ranks and a
    continuous score) in [0, 1]."""
    rng = np.random.default_rng(seed)
    change = rng.random(n) < moved
    down = rng.random(n) < bias
    if binary:
        base = (rng.random(n) < 0.6).astype(float)
        head = np.where(change, np.where(down, 0.0, 1.0), base)
    else:
        base = np.where(rng.random(n) < 0.5, 1.0 / rng.integers(1, 16, n), rng.random(n))
        step = rng.random(n)
        head = np.where(change, np.where(down, base * step, base + (1 - base) * step), base)
    return base, head


@settings(max_examples=150, deadline=None)
@given(n=st.one_of(st.integers(6, 60), st.integers(61, 400), st.sampled_from([1_000, 5_000, 60_000])),
       seed=st.integers(0, 2**32 - 1), binary=st.booleans(),
       moved=st.sampled_from([0.0, 0.02, 0.1, 0.3, 1.0]), bias=st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0]))
def test_every_interval_lies_in_the_metrics_range_and_agrees_with_its_p_value(n, seed, binary, moved, bias):
    base, head = _pair(n, seed, binary, moved, bias)
    name = "hit@5" if binary else "mrr"
    t = paired_test(name, base, head, with_mdc=False)
    assert t.method == ("Tango score" if binary else t.method) and (t.method == "Tango score") == binary
    # a difference of two means of values in [0, 1] lies in [-1, 1]; so does every interval
    assert -1.0 <= t.ci_low <= t.delta <= t.ci_high <= 1.0
    # one procedure: zero is outside the interval exactly when p < alpha
    assert (t.ci_low > 0 or t.ci_high < 0) == (t.p_value < ALPHA) == t.significant
    # the gate's one-sided test: a p-value, 1 unless the metric fell
    assert 0.0 <= t.p_drop <= 1.0 and (t.p_drop == 1.0 or t.delta < 0)
