"""A sweep's statistics: means over the questions every row measured, each row against row
1 with Holm's correction over rows x metrics, the best row only when it is separable."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ci_eval.core.compare.stats import ALPHA, Z_POWER, paired_test, z_two_sided
from ci_eval.core.compare.sweep import RowValues, questions_to_separate, sweep_table

IDS = tuple(f"q{i}" for i in range(40))


def row(label, hit, mrr, ids=IDS, failed=0):
    return RowValues(label, tuple(ids), {"hit@5": np.asarray(hit, float), "mrr": np.asarray(mrr, float)}, failed)


def binomial_two_sided(lost: int, gained: int) -> float:
    """A 0/1 metric's row test: McNemar's score statistic against the normal (Tango's score
    test at zero), two-sided."""
    return math.erfc(abs(gained - lost) / math.sqrt(lost + gained) / math.sqrt(2))


def test_row_cells_are_means_and_row_one_tests_holm_corrected():
    base_hit = [1] * 20 + [0] * 20
    better_hit = [1] * 32 + [0] * 8  # gains 12 questions, loses none
    same_hit = base_hit[:]
    mrr = [0.5] * 40
    table = sweep_table([row("a", base_hit, mrr), row("b", better_hit, mrr), row("c", same_hit, mrr)],
                        ("hit@5", "mrr"))
    assert table.n == 40 and table.left_out == 0 and table.family == 4
    assert [r.means["hit@5"] for r in table.rows] == [20 / 40, 32 / 40, 20 / 40]
    gain = table.rows[1].tests["hit@5"]
    assert gain.delta == pytest.approx(12 / 40)
    raw = binomial_two_sided(0, 12)
    assert gain.p_value == pytest.approx(raw)
    # Holm over the family of four: the smallest p-value times four; the three others are 1
    assert gain.p_adjusted == pytest.approx(min(1.0, 4 * raw))
    assert gain.significant is (4 * raw < ALPHA)
    assert table.rows[2].tests["hit@5"].p_adjusted == 1.0
    assert table.rows[0].tests == {}


def test_only_questions_every_row_measured_are_compared():
    a = row("a", [1] * 40, [1.0] * 40)
    b = row("b", [1] * 38, [0.5] * 38, ids=IDS[:38], failed=2)
    table = sweep_table([a, b], ("hit@5", "mrr"))
    assert table.n == 38 and table.left_out == 2
    assert table.rows[1].means["mrr"] == 0.5 and table.rows[0].means["mrr"] == 1.0
    assert table.rows[1].failed == 2


def test_a_row_ahead_of_every_other_is_provably_best():
    zeros, ones = [0] * 40, [1] * 40
    table = sweep_table([row("a", zeros, zeros), row("b", [1] * 20 + [0] * 20, zeros), row("c", ones, zeros)],
                        ("hit@5", "mrr"))
    best = table.best
    assert best.top == 3 and best.separated and best.rival is None
    # c vs a: 40 gains, c vs b: 20 gains; Holm over the two: the smaller p-value times two,
    # the larger times one (never below the first)
    p40, p20 = binomial_two_sided(0, 40), binomial_two_sided(0, 20)
    assert best.tests[1].p_adjusted == pytest.approx(2 * p40)
    assert best.tests[2].p_adjusted == pytest.approx(max(2 * p40, p20))


def test_rows_that_cannot_be_told_apart_name_the_rival_and_the_questions_needed():
    a = [1] * 20 + [0] * 20
    b = [1] * 19 + [0] * 21  # one question lost: not separable
    table = sweep_table([row("a", a, a), row("b", b, b)], ("hit@5", "mrr"))
    best = table.best
    assert best.top == 1 and not best.separated and best.rival == 2
    assert best.difference == pytest.approx(1 / 40)
    deltas = np.asarray(a, float) - np.asarray(b, float)
    assert best.needed == questions_to_separate(deltas, 1 / 40, ALPHA)


def test_equal_rows_need_no_number_of_questions():
    a = [1] * 20 + [0] * 20
    table = sweep_table([row("a", a, a), row("b", a, a)], ("hit@5", "mrr"))
    assert table.best.rival == 2 and table.best.needed is None and table.best.difference == 0.0


def test_the_questions_needed_do_separate_that_difference():
    """Derived from the normal limit: with M copies of a delta pattern whose mean is d the
    test must reject at alpha, and with far fewer it must not."""
    pattern = np.array([1.0] * 3 + [-1.0] * 1 + [0.0] * 16)  # mean 0.1, mean square 0.2
    d, s2 = float(pattern.mean()), float(np.mean(pattern ** 2))
    m = questions_to_separate(pattern, d, ALPHA)
    root = z_two_sided(ALPHA) * math.sqrt(s2) + Z_POWER * math.sqrt(s2 - d * d)
    assert m == math.ceil((root / d) ** 2)
    copies = math.ceil(m / pattern.size)
    many = np.tile(pattern, copies)
    assert paired_test("hit@5", np.zeros(many.size), many).significant
    few = np.tile(pattern, max(1, copies // 8))
    assert not paired_test("hit@5", np.zeros(few.size), few).significant
    assert questions_to_separate(pattern, 0.0) is None


def test_one_row_has_no_best():
    table = sweep_table([row("a", [1] * 40, [1.0] * 40)], ("hit@5",))
    assert table.best is None and table.family == 0
