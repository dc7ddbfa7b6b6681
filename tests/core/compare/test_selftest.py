"""The selftest's simulation: a push moves every gold chunk past k, no change without noise
fails nothing, each configured rule is counted as the real gate decides it, and the
questions needed follow the MDC's equation for the gate's one-sided test."""

from __future__ import annotations

import numpy as np
from factories import artefact, as_v2, spec
from factories import ranked_with_gold_at as at

from ci_eval.core.compare.gate_policy import GatePolicy
from ci_eval.core.compare.selftest import PUSHED, pushed_past, questions_to_detect, selftest
from ci_eval.core.compare.stats import ALPHA, mdc
from ci_eval.core.report.render_selftest import render_selftest


def test_a_push_moves_every_gold_chunk_to_just_past_k():
    ids = [f"c{j}" for j in range(10)]
    gold = {"c1": 1, "c6": 2, "c3": 0}  # c3 judged not relevant: it stays
    out = pushed_past(ids, gold, 5, 1)
    assert out[:5] == ["c0", "c2", "c3", "c4", "c5"] and out[5:7] == ["c1", "c6"]
    assert sorted(out) == sorted(ids)
    # fewer than k other results: the gold cannot sit past k, so it drops out
    assert pushed_past(["g", "x", "y"], {"g": 1}, 5, 1) == ["x", "y"]


def _data(n: int, version: int = 1) -> dict:
    runs = artefact([spec(f"q{i:02d}", ["g"], at(1 + i % 3)) for i in range(n)])
    return as_v2(runs) if version == 2 else runs


def test_without_noise_nothing_fails_under_no_change_and_each_rule_is_counted():
    policy = GatePolicy.from_mapping({"max_new_misses": 2, "min": {"hit@5": 0.9}})
    for version in (1, 2):  # both artefact layouts are read
        result = selftest(_data(20, version), policy, pairs=4)
        rates = {r.label: r.rates for r in result.rules}
        # 20 hits: n lost leave (20 - n) / 20, under 0.9 from n = 3; more than 2 lost from 3
        expected = tuple(1.0 if p >= 3 else 0.0 for p in PUSHED)
        assert rates == {"min hit@5": expected, "max_new_misses": expected}
        assert result.gate == expected and result.questions == result.pushable == 20
    text = render_selftest(result)
    assert "| min hit@5" in text and "| the gate (any rule)" in text


def test_noise_without_a_rule_that_reads_it_changes_nothing_and_is_said():
    policy = GatePolicy.from_mapping({"min": {"hit@15": 0.5}})
    result = selftest(_data(12), policy, pairs=3, jitter=0.3)
    # gold at rank 1 to 3 cannot leave the top 15 by swaps of neighbours, nor by a push
    assert result.rules[0].rates == (0.0,) * len(PUSHED)
    assert "swapped with probability 0.3" in render_selftest(result)


def test_questions_to_detect_is_where_the_mdc_reaches_the_drop():
    rng = np.random.default_rng(4)
    deltas = rng.choice([-1.0, 0.0, 1.0], p=[0.05, 0.9, 0.05], size=400)
    n = questions_to_detect(deltas, 0.05, binary=True, family=2)
    v = float(np.mean(deltas ** 2))

    def mdc_at(size):  # same per-question noise, ``size`` questions; one-sided at alpha / 2
        d = np.zeros(size)
        moved = int(round(v * size))
        d[:moved // 2], d[moved // 2:moved] = -1.0, 1.0
        return mdc(d, np.ones(size), binary=False, alpha=2 * ALPHA / 2)

    assert mdc_at(int(n * 1.05)) <= 0.05 <= mdc_at(int(n * 0.95))
