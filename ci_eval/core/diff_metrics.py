"""Per-metric change: the mean over the compared questions on both sides with its paired
test, and the mean over each side's measured questions (what floors apply to)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ci_eval.core.artefact import QuestionResult
from ci_eval.core.stats import PairedTest, mean, paired_tests


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


def paired_values(compared: tuple[str, ...], bq: dict[str, QuestionResult],
                  hq: dict[str, QuestionResult], metrics) -> dict:
    return {name: (np.array([bq[i].value(name) for i in compared]),
                   np.array([hq[i].value(name) for i in compared])) for name in metrics}


def overall(questions, metric: str) -> float | None:
    return mean(q.value(metric) for q in questions if q.measured)


def metric_changes(head_metrics: tuple[str, ...], base_metrics: tuple[str, ...] | None,
                   paired: dict, hq: dict[str, QuestionResult],
                   bq: dict[str, QuestionResult] | None, seed: int | None) -> tuple:
    tests = paired_tests({m: v for m, v in paired.items() if v[0].size},
                         **({"seed": seed} if seed is not None else {}))
    on_base = set(base_metrics or ())
    out = []
    for name in head_metrics:
        t = tests.get(name)
        out.append(MetricChange(
            name=name, base=t.base_mean if t else None, head=t.head_mean if t else None,
            delta=t.delta if t else None, head_overall=overall(hq.values(), name),
            base_overall=overall(bq.values(), name) if bq and name in on_base else None,
            test=t, missing=None if bq is None or name in on_base else "base"))
    for name in sorted(on_base - set(head_metrics)):
        out.append(MetricChange(name, None, None, None, None, overall(bq.values(), name),
                                None, "head"))
    return tuple(out)
