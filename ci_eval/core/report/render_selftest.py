"""The table ``ci-eval selftest`` prints, from the simulation core/compare/selftest.py runs."""

from __future__ import annotations

from ci_eval.core.compare.selftest import SelftestResult
from ci_eval.core.report.markdown import table
from ci_eval.core.textfmt import plural


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def render_selftest(result: SelftestResult, k: int) -> str:
    """The table ``ci-eval selftest`` prints (markdown)."""
    rules = [m for m, _ in (result.rows[0].rules if result.rows else ())]
    headers = ["scenario", "verdict: significant change", "verdict: regressed"]
    headers += [f"max_drop {m} fails" for m in rules] + ["gate fails"]
    rows = [[r.scenario, _pct(r.claims), _pct(r.regressed)]
            + [_pct(v) for _, v in r.rules] + [_pct(r.gate)] for r in result.rows]
    lines = [f"#### Selftest: {plural(result.questions, 'answerable question')}, "
             f"{result.pairs} simulated comparisons per row", "",
             table(headers, rows), "",
             f"A/A: base and head are two draws of the base run's rankings, each adjacent pair "
             f"swapped with probability {result.jitter:g}; every other row injects its change "
             f"into {_pct(result.share)} of the head's questions (k={k}). The A/A row is the "
             "false-alarm rate; the others are detection rates."]
    for metric, drop, n in result.needed:
        have = "" if n is None else (" (this gold set has enough)" if n <= result.questions
                                     else f" ({n - result.questions} more than this gold set)")
        lines.append(f"- a drop of {drop:g} in {metric} is detected with 80 % power from "
                     f"{'—' if n is None else plural(n, 'question')}{have}")
    return "\n".join(lines) + "\n"
