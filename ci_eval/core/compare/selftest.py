"""What a gate can see on this gold set: simulated comparisons of a base run against
itself (A/A) and against injected regressions, through the same paired tests and
``max_drop`` decisions as ``compare``.

The base artefact holds each question's ranking and gold. A simulated run redraws that
ranking with run-to-run noise: each adjacent pair of the top results swaps with
probability ``jitter`` (ties, an approximate index). Base and head are two such draws; the
head may carry one injected change, on a ``share`` of the questions:

- ``A/A``: none (every claim is a false alarm);
- ``gold pushed past k``: a question with gold in the top k has its gold chunks moved to
  rank k + 1;
- ``top k shuffled``: the top k in a random order;
- ``gold deleted from the index``: the gold chunks vanish from the ranking (the rest moves
  up);
- ``re-chunk``: every id of the ranking renamed (new chunks no gold label names).

Each row is the rate over ``pairs`` simulated comparisons of: the verdict claiming a
significant change, the verdict saying "regressed", each ``max_drop`` rule failing, and the
gate failing. Pure: data in, data out; a seeded generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ci_eval.core.compare.stats import ALPHA, SEED, Z_POWER, paired_tests, z_two_sided
from ci_eval.core.measure.metrics import compute

SCENARIOS = ("A/A", "gold pushed past k", "top k shuffled", "gold deleted from the index",
             "re-chunk")


@dataclass(frozen=True)
class SelftestRow:
    scenario: str
    claims: float  # the verdict claims a significant change
    regressed: float  # ... a significant fall
    rules: tuple[tuple[str, float], ...]  # (max_drop metric, how often it fails)
    gate: float  # any max_drop rule fails

    def as_dict(self) -> dict:
        return {"scenario": self.scenario, "claims": self.claims, "regressed": self.regressed,
                "rules": dict(self.rules), "gate": self.gate}


@dataclass(frozen=True)
class SelftestResult:
    questions: int
    pairs: int
    share: float
    jitter: float
    rows: tuple[SelftestRow, ...]
    needed: tuple[tuple[str, float, int | None], ...]  # (metric, drop d, questions to detect it)

    def as_dict(self) -> dict:
        return {"questions": self.questions, "pairs": self.pairs, "share": self.share,
                "jitter": self.jitter, "rows": [r.as_dict() for r in self.rows],
                "questions_to_detect": [{"metric": m, "drop": d, "questions": n}
                                        for m, d, n in self.needed]}


def _jittered(ranking: list, jitter: float, rng: np.random.Generator) -> list:
    out = list(ranking)
    for i in np.flatnonzero(rng.random(max(len(out) - 1, 0)) < jitter).tolist():
        out[i], out[i + 1] = out[i + 1], out[i]
    return out


def _inject(scenario: str, ranking: list, gold: dict, k: int, rng) -> list:
    relevant = {i for i, g in gold.items() if g > 0}
    if scenario == "gold pushed past k":
        if not relevant.intersection(ranking[:k]):
            return ranking
        rest = [i for i in ranking if i not in relevant]
        found = [i for i in ranking if i in relevant]
        return rest[:k] + found + rest[k:]
    if scenario == "top k shuffled":
        top = list(ranking[:k])
        rng.shuffle(top)
        return top + ranking[k:]
    if scenario == "gold deleted from the index":
        return [i for i in ranking if i not in relevant]
    if scenario == "re-chunk":
        return [f"{i}#rechunked" for i in ranking]
    return ranking


def _drop_fails(policy, tests, metric: str, allowed: float) -> bool:
    t = tests.get(metric)
    if t is None or t.n == 0:
        return False
    return -t.delta > allowed + 1e-9 and (policy.regressions == "always" or t.significant)


def _one_scenario(scenario, rankings, golds, metrics, k, level, policy, pairs, share, jitter,
                  rng) -> SelftestRow:
    claims = regressed = gate = 0
    fails = {m: 0 for m, _ in policy.max_drop}
    for i in range(pairs):
        base = [_jittered(r, jitter, rng) for r in rankings]
        head = [_jittered(r, jitter, rng) for r in rankings]
        chosen = rng.random(len(rankings)) < share
        head = [_inject(scenario, h, g, k, rng) if c else h
                for h, g, c in zip(head, golds, chosen)]
        b, h = compute(metrics, base, golds, level), compute(metrics, head, golds, level)
        tests = paired_tests({m: (b[m], h[m]) for m in b}, seed=SEED + i)
        claims += any(t.significant for t in tests.values())
        regressed += any(t.significant and t.delta < 0 for t in tests.values())
        failed = [m for m, allowed in policy.max_drop if _drop_fails(policy, tests, m, allowed)]
        for m in failed:
            fails[m] += 1
        gate += bool(failed)
    return SelftestRow(scenario, claims / pairs, regressed / pairs,
                       tuple((m, c / pairs) for m, c in fails.items()), gate / pairs)


def questions_to_detect(deltas: np.ndarray, drop: float, binary: bool, family: int,
                        alpha: float = ALPHA, power_z: float = Z_POWER) -> int | None:
    """Questions needed for the corrected test to detect a fall of ``drop`` with 80 %
    power, from the per-question noise of ``deltas`` (A/A): the MDC's equation
    (core/compare/stats.mdc) solved for ``n``. A fall made of whole questions (``u`` = 1 for
    binary metrics, else the moved questions' mean size)."""
    if drop <= 0:
        return None
    moved = deltas[deltas != 0]
    v = float(np.mean(deltas ** 2)) if deltas.size else 0.0
    u = 1.0 if binary or moved.size == 0 else float(np.mean(np.abs(moved)))
    za = z_two_sided(alpha / max(family, 1))
    spread = v + drop * u
    root = za * math.sqrt(spread) + power_z * math.sqrt(max(spread - drop * drop, 0.0))
    return max(math.ceil((root / drop) ** 2), 1)


def selftest(rankings: list[list[str]], golds: list[dict], metrics: tuple[str, ...], k: int,
             policy, *, level: float = 1, pairs: int = 200, share: float = 0.2,
             jitter: float = 0.1, seed: int = SEED, drops: tuple[tuple[str, float], ...] = ()
             ) -> SelftestResult:
    """The table for ``rankings``/``golds`` (answerable questions of the base run)."""
    rows = []
    for n, scenario in enumerate(SCENARIOS):
        rng = np.random.default_rng([seed, n])
        rows.append(_one_scenario(scenario, rankings, golds, metrics, k, level, policy,
                                  pairs, share, jitter, rng))
    # the A/A noise each metric carries, from one more pair of draws per question
    rng = np.random.default_rng([seed, len(SCENARIOS)])
    base = [_jittered(r, jitter, rng) for r in rankings for _ in range(4)]
    head = [_jittered(r, jitter, rng) for r in rankings for _ in range(4)]
    repeated = [g for g in golds for _ in range(4)]
    b, h = compute(metrics, base, repeated, level), compute(metrics, head, repeated, level)
    wanted = drops or tuple(policy.max_drop) or ((f"hit@{k}", 0.05),)
    needed = tuple((m, d, questions_to_detect(h[m] - b[m], d, m.startswith("hit@"), len(metrics)))
                   for m, d in wanted if m in b)
    return SelftestResult(len(rankings), pairs, share, jitter, tuple(rows), needed)
