"""Paired statistics: how fast (5,000 questions x 6 metrics), and whether the verdict
keeps its promises, by simulation of A/A pairs (base and head from one distribution).

Each simulated question has its own distribution of the first gold chunk's rank (1..15 or
not retrieved); a run draws one rank per question. The ten default metrics of a
single-gold question follow from the rank. Designs:

- ``independent``: base and head independent draws (a retriever with run-to-run noise);
- ``half``: head keeps base's ranking on half of the questions, draws again on the rest.

Measured, for each number of questions: the headline's family-wise false-alarm rate (any
metric "significant" after Holm), the gate's failure rate (``max_drop`` hit@5 0.03 and mrr
0.05, ``regressions = "significant"``: one-sided exact tests, Holm over the two), each with a binomial 95 % interval; the power at
the printed minimum detectable change of hit@5 (that drop planted in head); and how often
the 95 % intervals cover the planted difference (its exact expectation over the
questions' distributions).

``python benchmarks/bench_stats.py [--pairs N] [--questions 40,100,500]``
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

METRICS = ("hit@5", "recall@5", "ndcg@5", "mrr", "hit@15", "map")
DEPTH = 15
GATE = (("hit@5", 0.03), ("mrr", 0.05))  # max_drop rules, regressions = "significant"


# --------------------------------------------------------------------------- simulation

def _values(rank: np.ndarray) -> dict[str, np.ndarray]:
    """The ten default metrics of single-gold questions from the first gold rank
    (0 = not retrieved)."""
    found = rank > 0
    safe = np.maximum(rank, 1)
    rr = np.where(found, 1.0 / safe, 0.0)
    out = {}
    for k in (5, 15):
        hit = (found & (rank <= k)).astype(float)
        out[f"hit@{k}"] = hit
        out[f"recall@{k}"] = hit
        out[f"precision@{k}"] = hit / k
        out[f"ndcg@{k}"] = np.where(hit > 0, 1.0 / np.log2(safe + 1), 0.0)
    out["mrr"] = rr
    out["map"] = rr
    return out


def questions(n: int, rng: np.random.Generator) -> np.ndarray:
    """Each question's rank distribution, ``(n, DEPTH + 1)``: column 0 is "not retrieved".
    Easy questions put most mass on rank 1, hard ones spread it or miss."""
    ease = rng.beta(2.0, 1.0, size=n)
    decay = 0.2 + 0.7 * ease  # P(next rank | not yet)
    ranks = np.arange(1, DEPTH + 1)
    found = decay[:, None] * (1 - decay[:, None]) ** (ranks[None, :] - 1)
    miss = 1.0 - found.sum(axis=1)
    return np.column_stack([miss, found])


def draw(pmf: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cdf = np.cumsum(pmf, axis=1)
    u = rng.random(pmf.shape[0])[:, None]
    return np.minimum((u > cdf).sum(axis=1), DEPTH)


def planted(pmf: np.ndarray, push: float) -> np.ndarray:
    """A regression: each question's chance of a gold chunk in the top 5 moved, a fraction
    ``push`` of it, to "not retrieved"."""
    out = pmf.copy()
    moved = out[:, 1:6] * push
    out[:, 1:6] -= moved
    out[:, 0] += moved.sum(axis=1)
    return out


def expected(pmf: np.ndarray) -> dict[str, float]:
    """Each metric's mean over the questions, in expectation: pmf @ value of each rank."""
    table = _values(np.arange(DEPTH + 1))
    return {m: float((pmf @ v).mean()) for m, v in table.items()}


def _pair(pmf, head_pmf, rng, design, push: float = 0.0):
    base = draw(pmf, rng)
    head = draw(head_pmf, rng)
    if design == "half":
        # the kept half is base's ranking, with the planted regression applied to it: the
        # same expected change as a fresh draw from ``planted(pmf, push)``
        kept = np.where((base >= 1) & (base <= 5) & (rng.random(base.size) < push), 0, base)
        head = np.where(rng.random(base.size) < 0.5, kept, head)
    b, h = _values(base), _values(head)
    return {m: (b[m], h[m]) for m in b}


def _gate_fails(tests) -> bool:
    """The gate's rule: each max_drop metric's one-sided exact test for a drop, Holm among
    the max_drop metrics only (core/compare/gate.py rule_max_drop)."""
    from ci_eval.core.compare.stats import ALPHA, holm

    adjusted = dict(zip([m for m, _ in GATE], holm([tests[m].p_drop for m, _ in GATE])))
    return any(-tests[m].delta > allowed + 1e-9 and adjusted[m] < ALPHA for m, allowed in GATE)


def _interval(k: int, pairs: int) -> list[float]:
    """Wilson 95 % interval of k in pairs."""
    z = 1.959963984540054
    p = k / pairs
    centre = (p + z * z / (2 * pairs)) / (1 + z * z / pairs)
    half = z * math.sqrt(p * (1 - p) / pairs + z * z / (4 * pairs * pairs)) / (1 + z * z / pairs)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def calibration(n: int, pairs: int, seed: int = 1, design: str = "independent",
                draws: int | None = None) -> dict:
    """A/A and planted pairs on ``n`` questions through ``paired_tests`` (the core)."""
    from ci_eval.core.compare.stats import paired_tests

    kw = {} if draws is None else {"draws": draws}
    rng = np.random.default_rng([seed, n])
    alarms = gate = power = covered = intervals = 0
    mdcs, by_metric = [], {}
    for i in range(pairs):
        pmf = questions(n, rng)
        aa = paired_tests(_pair(pmf, pmf, rng, design), seed=i, **kw)
        alarms += any(t.significant for t in aa.values())
        gate += _gate_fails(aa)
        # plant the drop of hit@5 this comparison printed as detectable (80 % power)
        mdc = aa["hit@5"].mdc
        mdcs.append(mdc)
        hit5 = expected(pmf)["hit@5"]
        push = min(1.0, mdc / hit5)
        head_pmf = planted(pmf, push)
        truth = {m: h - b for (m, b), h in zip(expected(pmf).items(), expected(head_pmf).values())}
        ab = paired_tests(_pair(pmf, head_pmf, rng, design, push), seed=pairs + i, **kw)
        power += ab["hit@5"].significant and ab["hit@5"].delta < 0
        for m, t in ab.items():
            intervals += 1
            covered += t.ci_low <= truth[m] <= t.ci_high
            by_metric[m] = by_metric.get(m, 0) + (t.ci_low <= truth[m] <= t.ci_high)
    return {"questions": n, "design": design, "pairs": pairs,
            "family_wise_false_alarm": alarms / pairs,
            "family_wise_false_alarm_95ci": _interval(alarms, pairs),
            "gate_failure": gate / pairs, "gate_failure_95ci": _interval(gate, pairs),
            "power_at_printed_mdc_hit5": power / pairs, "power_95ci": _interval(power, pairs),
            "mean_printed_mdc_hit5": float(np.mean(mdcs)),
            "coverage_95_planted": covered / intervals,
            "coverage_95_by_metric": {m: c / pairs for m, c in by_metric.items()}}


# --------------------------------------------------------------------------- speed

def _data(n: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    paired = {}
    for m in METRICS:
        if m.startswith("hit@"):
            base = (rng.random(n) < 0.7).astype(float)
            head = np.where(rng.random(n) < 0.1, 1.0 - base, base)
        else:
            base = rng.random(n)
            head = np.where(rng.random(n) < 0.3, np.clip(base + rng.normal(0, 0.2, n), 0, 1), base)
        paired[m] = (base, head)
    return paired


def stats_speed(n: int = 5000, draws: int = 10_000) -> dict:
    from ci_eval.core.compare.stats import paired_tests

    paired = _data(n)
    paired_tests(paired, draws=100)  # import and first-call costs out of the timing
    start = time.perf_counter()
    ours = paired_tests(paired, draws=draws)
    ours_s = time.perf_counter() - start
    return {"questions": n, "metrics": len(METRICS), "draws": draws, "ours_s": ours_s,
            "goal_s": 0.5, "methods": sorted({t.method for t in ours.values()})}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--questions", default="40,100,500")
    ap.add_argument("--designs", default="independent,half")
    args = ap.parse_args(argv)
    out = {"speed": stats_speed(), "calibration": []}
    for design in args.designs.split(","):
        for n in (int(x) for x in args.questions.split(",")):
            start = time.perf_counter()
            row = calibration(n, args.pairs, design=design)
            row["seconds"] = time.perf_counter() - start
            out["calibration"].append(row)
            print(json.dumps(row), flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
