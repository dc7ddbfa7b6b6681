"""The verdict's promises held by simulation (small and seeded here; the large run is
benchmarks/bench_stats.py): under A/A the headline's family-wise false-alarm rate and the
gate's failure rate stay within alpha, the printed minimum detectable change is detected
with about 80 % power, and the 95 % intervals cover the planted differences."""

from __future__ import annotations

import importlib.util
import math
import sys

import pytest
from suite_paths import REPO_ROOT

from ci_eval.core.compare.stats import ALPHA

BENCH = REPO_ROOT / "benchmarks" / "bench_stats.py"
PAIRS = 60


def _module():
    spec = importlib.util.spec_from_file_location("bench_stats", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def _binomial_upper(pairs: int, p: float, tail: float = 0.001) -> int:
    """The count a Binomial(pairs, p) exceeds with probability below ``tail``: the margin
    of a run this size."""
    total, k = 0.0, 0
    while True:
        total += math.comb(pairs, k) * p ** k * (1 - p) ** (pairs - k)
        if 1 - total < tail:
            return k
        k += 1


@pytest.fixture(scope="module")
def run():
    return _module().calibration(40, PAIRS, seed=3)


def test_a_a_false_alarms_stay_within_alpha(run):
    limit = _binomial_upper(PAIRS, ALPHA) / PAIRS
    assert run["family_wise_false_alarm"] <= limit
    assert run["gate_failure"] <= limit


def test_the_printed_mdc_is_detected_with_about_80_percent_power(run):
    low, high = run["power_95ci"]
    assert low <= 0.9 and high >= 0.7  # the run's interval meets [0.7, 0.9]
    assert 0.6 <= run["power_at_printed_mdc_hit5"] <= 0.97


def test_intervals_cover_the_planted_differences(run):
    intervals = PAIRS * len(run["coverage_95_by_metric"])
    margin = 3 * math.sqrt(0.95 * 0.05 / intervals)
    assert 0.93 - margin <= run["coverage_95_planted"] <= 0.97 + margin
