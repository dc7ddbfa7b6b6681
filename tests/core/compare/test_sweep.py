"""A sweep's statistics: means over the questions every row measured, read as a ladder (each
row against the one before and against row 1), one Holm family for the cells and the best
row, the best row only when it is separable and only on a metric that compares the rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ci_eval.core.compare.stats import ALPHA, Z_POWER, paired_test, z_two_sided
from ci_eval.core.compare.sweep import RowValues, questions_to_separate, sweep_table

IDS = tuple(f"q{i}" for i in range(40))


def row(label, hit, mrr, ids=IDS, failed=0, index=None):
    return RowValues(label, tuple(ids), {"hit@5": np.asarray(hit, float), "mrr": np.asarray(mrr, float)}, failed,
                     index)


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
    # the family: 2 steps x 2 metrics, row 3 against row 1 x 2 metrics (row 2's step is its
    # change from row 1, tested once); the best row's tests are among them
    assert table.n == 40 and table.left_out == 0 and table.family == 2 * 2 + 1 * 2
    assert [r.means["hit@5"] for r in table.rows] == [20 / 40, 32 / 40, 20 / 40]
    gain = table.rows[1].tests["hit@5"]
    assert gain.delta == pytest.approx(12 / 40)
    raw = binomial_two_sided(0, 12)
    assert gain.p_value == pytest.approx(raw)
    # Holm over the six: two p-values of `raw` (b's gain, c's step back), four of 1
    assert gain.p_adjusted == pytest.approx(min(1.0, 6 * raw))
    assert gain.significant is (6 * raw < ALPHA)
    back = table.rows[2].step["hit@5"]
    assert back.delta == pytest.approx(-12 / 40) and back.p_adjusted == pytest.approx(min(1.0, 6 * raw))
    assert table.rows[2].tests["hit@5"].p_adjusted == 1.0
    assert table.rows[1].step["hit@5"] is table.rows[1].tests["hit@5"]
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
    # c vs a: 40 gains, c vs b: 20 gains, b vs a: 20 gains on hit@5; the mrr tests (no change)
    # have p 1. Holm over the family of six: 40 gains times six, the two of 20 gains times
    # five and four (each never below the one before)
    p40, p20 = binomial_two_sided(0, 40), binomial_two_sided(0, 20)
    assert table.family == 6
    assert best.tests[1].p_adjusted == pytest.approx(6 * p40)
    assert best.tests[2].p_adjusted == pytest.approx(max(6 * p40, 5 * p20))
    # the sentence's tests are the cells' tests: one family, one decision per pair
    assert best.tests[1] == table.rows[2].tests["hit@5"]
    assert best.tests[2] == table.rows[2].step["hit@5"]


def test_rows_that_cannot_be_told_apart_name_the_rival_and_the_questions_needed():
    a = [1] * 20 + [0] * 20
    b = [1] * 19 + [0] * 21  # one question lost: not separable
    table = sweep_table([row("a", a, a), row("b", b, b)], ("hit@5", "mrr"))
    best = table.best
    assert best.top == 1 and not best.separated and best.rival == 2
    assert best.difference == pytest.approx(1 / 40)
    deltas = np.asarray(a, float) - np.asarray(b, float)
    # at the level of the one family (two tests: hit@5 and mrr of row 2 against row 1)
    assert best.needed == questions_to_separate(deltas, 1 / 40, ALPHA / table.family)


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


def test_the_best_row_read_from_the_other_side_is_the_same_test_turned_round():
    a, b = [1] * 30 + [0] * 10, [1] * 10 + [0] * 30
    table = sweep_table([row("a", a, a), row("b", b, b)], ("hit@5", "mrr"))
    best = table.best
    assert best.top == 1 and best.separated
    cell = table.rows[1].tests["hit@5"]  # b - a
    mine = best.tests[2]  # a - b
    assert mine.delta == -cell.delta == pytest.approx(20 / 40)
    assert (mine.ci_low, mine.ci_high) == (-cell.ci_high, -cell.ci_low)
    assert (mine.lost, mine.gained) == (cell.gained, cell.lost) and mine.p_adjusted == cell.p_adjusted


def _evidence_row(label, hit, evidence, index):
    values = {"recall@5": np.asarray(hit, float), "evidence_recall@5": np.asarray(evidence, float)}
    return RowValues(label, IDS, values, 0, index)


def test_across_chunkings_the_best_row_is_decided_on_evidence_recall():
    many_chunks = _evidence_row("small", [0] * 40, [1] * 40, "small")
    few_chunks = _evidence_row("large", [1] * 40, [0.5] * 40, "large")
    table = sweep_table([many_chunks, few_chunks], ("recall@5", "evidence_recall@5"))
    # recall@5 puts row 2 first; the evidence, which compares the chunkings, row 1
    assert table.decided_on == "evidence_recall@5" and table.best.chunkings
    assert table.best.top == 1 and table.best.metric == "evidence_recall@5"


def test_across_chunkings_without_evidence_metrics_no_row_is_ranked_and_the_table_says_why():
    table = sweep_table([row("small", [0] * 40, [0] * 40, index="a"), row("large", [1] * 40, [1] * 40, index="b")],
                        ("hit@5", "mrr"))
    assert table.best is None and table.decided_on is None
    assert "cannot rank chunkings" in table.reason
    # the same rows on one index are ranked on the first metric
    same = sweep_table([row("small", [0] * 40, [0] * 40, index="a"), row("large", [1] * 40, [1] * 40, index="a")],
                       ("hit@5", "mrr"))
    assert same.best.top == 2 and same.decided_on == "hit@5"
