"""The table ``ci-eval selftest`` prints, from the simulation core/compare/selftest.py runs:
a line per configured rule, a column per scenario."""

from __future__ import annotations

from ci_eval.core.compare.selftest import PUSHED, SelftestResult, column_name
from ci_eval.core.report.markdown import table
from ci_eval.core.textfmt import plural


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def render_selftest(result: SelftestResult) -> str:
    """The table ``ci-eval selftest`` prints (markdown)."""
    headers = ["rule fails", *(column_name(p) for p in PUSHED)]
    rows = [[r.label, *map(_pct, r.rates)] for r in result.rules]
    rows.append(["the gate (any rule)", *map(_pct, result.gate)])
    noise = (f"each adjacent pair of results swapped with probability {result.jitter:g} in every "
             "simulated run, a retriever that is not deterministic" if result.jitter else
             "the run against itself, as a deterministic retriever gives it; --jitter models one "
             "that is not")
    lines = [f"#### Selftest: {plural(result.questions, 'answerable question')}, "
             f"{result.pushable} with gold in the top {result.k}; "
             f"{plural(result.pairs, 'simulated comparison')} per column", "",
             table(headers, rows), "",
             f"How often each rule of the gate fails: under no change ({noise}), and when 1, 2, "
             f"3 or 5 questions drawn at random have their gold chunks pushed from the top "
             f"{result.k} to just past it. Each comparison is made and decided as `ci-eval "
             "compare` does. A rule that fails under no change fails every pull request; "
             "one that stays at 0 % when questions are pushed cannot see those losses."]
    if result.pushable < max(PUSHED):
        lines.append(f"- only {plural(result.pushable, 'question')} can be pushed: a column "
                     "asking for more pushes them all")
    if result.approximated:
        lines.append(f"- {', '.join(result.approximated)}: measured on document characters; the "
                     "artefact holds no chunk spans, so a pushed question scores 0 at depths up to "
                     "k and keeps the base's value deeper")
    for metric, drop, n in result.needed:
        lines.append(f"- max_drop {metric}: a drop of {drop:g} made of whole questions is "
                     f"detected with 80 % power from {'—' if n is None else plural(n, 'question')}"
                     + ("" if n is None else " (this gold set has enough)" if n <= result.questions
                        else f" ({n - result.questions} more than this gold set)"))
    return "\n".join(lines) + "\n"
