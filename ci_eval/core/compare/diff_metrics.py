"""Per-metric change: the mean over the compared questions on both sides with its paired
test, and the mean over each side's measured questions (what floors apply to)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ci_eval.core.artefact.artefact import Artefact
from ci_eval.core.compare.stats import PairedTest, mean, paired_tests


@dataclass(frozen=True)
class MetricChange:
    """A metric on the compared questions (base, head, delta, paired test) and on all of
    head's measured questions (``head_overall``, the number floors apply to)."""

    name: str
    base: float | None
    head: float | None
    delta: float | None
    head_overall: float | None
    base_overall: float | None
    test: PairedTest | None
    missing: str | None  # "base" | "head" when one side did not measure it

    @property
    def compared(self) -> bool:
        return self.test is not None and self.test.n > 0

    @property
    def moved(self) -> bool:
        return self.test is not None and (self.test.lost > 0 or self.test.gained > 0)


def paired_values(compared: tuple[str, ...], base: Artefact | None, head: Artefact,
                  metrics, at: tuple | None = None) -> dict:
    """``{metric: (base values, head values)}`` over the compared questions, in their order:
    each side's metric column taken at the compared questions' positions (``at``: each
    side's positions as index arrays, when the caller holds them)."""
    if base is None or not compared:
        return {name: (np.array([]), np.array([])) for name in metrics}
    at_base, at_head = at if at is not None else (base.positions(compared), head.positions(compared))
    return {name: (base.column(name)[at_base], head.column(name)[at_head]) for name in metrics}


def noise_ties(compared: tuple[str, ...], *sides) -> np.ndarray | None:
    """Over the compared questions, in order: those whose outcome (first gold rank, hit at
    k) the retriever changed by itself between identical passes of either run (``run
    --repeat``; ``sides``: the runs' headers). Their change in this comparison could be
    that noise, so the paired tests count it as none (stats.paired_test). Only the
    questions a record names count (core/artefact/repeat.py bounds the names it keeps)."""
    noisy = {qid for side in sides if side is not None and side.repeat is not None
             for qid, _, outcome in side.repeat.flapping if outcome}
    if not noisy:
        return None
    return np.fromiter(map(noisy.__contains__, compared), dtype=bool, count=len(compared))


def overall(run: Artefact, metric: str, measured=None) -> float | None:
    """The mean over the run's measured questions (what floors apply to); ``measured``:
    the run's ``measured_mask()``, when the caller asks it once for every metric."""
    mask = run.measured_mask() if measured is None else measured
    return mean(run.column(metric)[mask].tolist())


def metric_changes(head_metrics: tuple[str, ...], base_metrics: tuple[str, ...] | None,
                   paired: dict, head: Artefact, base: Artefact | None, seed: int | None,
                   ties: np.ndarray | None = None, describe: bool = True) -> tuple:
    """Every metric's change; ``describe=False`` leaves out what only a reader needs (each
    test's interval and the minimum detectable change), keeping every decision."""
    tests = paired_tests({m: v for m, v in paired.items() if v[0].size}, ties=ties,
                         with_mdc=describe, with_interval=describe,
                         **({"seed": seed} if seed is not None else {}))
    on_base = set(base_metrics or ())
    has_base = base is not None and bool(base.questions)
    on_head = head.measured_mask()
    measured = base.measured_mask() if has_base else None
    out = []
    for name in head_metrics:
        t = tests.get(name)
        out.append(MetricChange(
            name=name, base=t.base_mean if t else None, head=t.head_mean if t else None,
            delta=t.delta if t else None, head_overall=overall(head, name, on_head),
            base_overall=overall(base, name, measured) if has_base and name in on_base else None,
            test=t, missing=None if base is None or name in on_base else "base"))
    for name in sorted(on_base - set(head_metrics)):
        out.append(MetricChange(name, None, None, None, None,
                                overall(base, name, measured if has_base else None), None, "head"))
    return tuple(out)
