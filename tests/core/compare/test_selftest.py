"""The selftest's simulation: injected changes do what they say, A/A without noise raises
nothing, and the questions needed follow the MDC's equation."""

from __future__ import annotations

import numpy as np
from factories import default_metrics

from ci_eval.core.compare.gate_policy import GatePolicy
from ci_eval.core.compare.selftest import _inject, questions_to_detect, selftest
from ci_eval.core.compare.stats import ALPHA, mdc
from ci_eval.core.report.render_selftest import render_selftest

METRICS = tuple(default_metrics(5))


def _gold_set(n: int):
    rankings = [[f"c{i}-{j}" for j in range(15)] for i in range(n)]
    golds = [{r[i % 3]: 1} for i, r in enumerate(rankings)]  # gold at rank 1, 2 or 3
    return rankings, golds


def test_each_injection_moves_the_gold_as_named():
    ranking = [f"c{j}" for j in range(10)]
    gold = {"c1": 1}
    rng = np.random.default_rng(0)
    assert _inject("gold pushed past k", ranking, gold, 5, rng).index("c1") == 5  # rank 6
    assert "c1" not in _inject("gold deleted from the index", ranking, gold, 5, rng)
    assert not set(_inject("re-chunk", ranking, gold, 5, rng)) & set(ranking)
    shuffled = _inject("top k shuffled", ranking, gold, 5, rng)
    assert sorted(shuffled[:5]) == ranking[:5] and shuffled[5:] == ranking[5:]
    assert _inject("A/A", ranking, gold, 5, rng) == ranking


def test_without_noise_a_a_claims_nothing_and_deleting_all_gold_is_always_caught():
    rankings, golds = _gold_set(20)
    policy = GatePolicy.from_mapping({"max_drop": {"hit@5": 0.05}})
    result = selftest(rankings, golds, METRICS, 5, policy, pairs=5, share=1.0, jitter=0.0)
    rows = {r.scenario: r for r in result.rows}
    assert (rows["A/A"].claims, rows["A/A"].gate) == (0.0, 0.0)
    # every question loses its gold: hit@5 1 -> 0 on 20 questions, p = 2 / 2**20
    for scenario in ("gold deleted from the index", "re-chunk", "gold pushed past k"):
        assert rows[scenario].regressed == 1.0 and dict(rows[scenario].rules)["hit@5"] == 1.0
    # the gold stays in the top 5 when only the top 5 is shuffled: hit@5 cannot fall
    assert dict(rows["top k shuffled"].rules)["hit@5"] == 0.0
    text = render_selftest(result, 5)
    assert "| gold deleted from the index" in text and "max_drop hit@5 fails" in text


def test_questions_to_detect_is_where_the_mdc_reaches_the_drop():
    rng = np.random.default_rng(4)
    deltas = rng.choice([-1.0, 0.0, 1.0], p=[0.05, 0.9, 0.05], size=400)
    n = questions_to_detect(deltas, 0.05, binary=True, family=10)
    v = float(np.mean(deltas ** 2))

    def mdc_at(size):  # same per-question noise, ``size`` questions
        d = np.zeros(size)
        moved = int(round(v * size))
        d[:moved // 2], d[moved // 2:moved] = -1.0, 1.0
        return mdc(d, np.ones(size), binary=True, alpha=ALPHA / 10)

    assert mdc_at(int(n * 1.05)) <= 0.05 <= mdc_at(int(n * 0.95))
