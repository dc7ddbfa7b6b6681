"""A sweep's table as markdown (the seeds' table), JSON or CSV; data in, text out."""

from __future__ import annotations

import json
import math

from ci_eval.core.compare.stats import ALPHA
from ci_eval.core.compare.sweep import SweepTable
from ci_eval.core.report.escape import escape_md
from ci_eval.core.report.markdown import metric as metric_md
from ci_eval.core.report.markdown import table
from ci_eval.core.textfmt import ci_text, f3, plural, signed

MARK = "✓"  # significant after Holm's correction


def _cell(row, m: str) -> str:
    mean = f3(row.means[m])
    t = row.tests.get(m)
    if t is None or t.p_value is None:
        return mean
    mark = f" {MARK}" if t.significant else ""
    return f"{mean} ({signed(t.delta)} {ci_text(t)}){mark}"


def verdict(sweep: SweepTable) -> str:
    """The sentence under the table: the provably best row, or the two that cannot be told
    apart and how many questions would."""
    b = sweep.best
    if b is None:
        return "One configuration, or no question every row measured: nothing to compare."
    top = sweep.rows[b.top - 1]
    if b.separated:
        return (f"**Best: row {b.top}, {escape_md(top.label)}**: ahead of every other row on "
                f"{metric_md(b.metric)} ({f3(top.means[b.metric])}; paired sign-flip "
                f"tests, Holm-corrected over {plural(len(b.tests), 'comparison')}, {sweep.n} questions).")
    rival = sweep.rows[b.rival - 1]
    which = "the top two" if _runner_up(sweep) == b.rival else f"rows {b.top} and {b.rival}"
    head = (f"No provably best configuration: {which} ({escape_md(top.label)}; "
            f"{escape_md(rival.label)}) are not separable on {sweep.n} questions")
    if b.needed is None:
        return f"{head}; their {metric_md(b.metric)} means are equal."
    return (f"{head}; about {b.needed:,} would separate a difference of "
            f"{b.difference:.3f} in {metric_md(b.metric)}.")


def _runner_up(sweep: SweepTable) -> int:
    m = sweep.best.metric
    order = sorted(sweep.rows, key=lambda r: (-r.means[m], r.number))
    return order[1].number


def render_markdown(sweep: SweepTable) -> str:
    headers = ["#", "configuration", *[metric_md(m) for m in sweep.metrics]]
    rows = [[str(r.number), escape_md(r.label), *[_cell(r, m) for m in sweep.metrics]] for r in sweep.rows]
    lines = [table(headers, rows), ""]
    if len(sweep.rows) == 1:
        lines.append(f"Means over the {plural(sweep.n, 'question')} measured.")
    else:
        lines.append(f"Means over the {plural(sweep.n, 'question')} every row measured; in brackets "
                     f"the change from row 1 and its paired 95 % interval (sign-flip permutation test); "
                     f"{MARK}: significant at {ALPHA:g} after Holm's correction over "
                     f"{plural(sweep.family, 'test')} ({plural(len(sweep.rows) - 1, 'row')} × "
                     f"{plural(len(sweep.metrics), 'metric')}).")
    if sweep.left_out:
        lines.append(f"{plural(sweep.left_out, 'question')} left out: not measured by every row.")
    failed = [r for r in sweep.rows if r.failed]
    if failed:
        lines.append("The retriever failed on " + "; ".join(
            f"{plural(r.failed, 'question')} of row {r.number}" for r in failed) + " (scored 0).")
    lines += ["", verdict(sweep)]
    return "\n".join(lines) + "\n"


def _number(x: float | None):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def sweep_dict(sweep: SweepTable) -> dict:
    b = sweep.best
    return {
        "metrics": list(sweep.metrics),
        "questions": sweep.n,
        "left_out": sweep.left_out,
        "family": sweep.family,
        "rows": [{"row": r.number, "label": r.label, "failed": r.failed,
                  "means": {m: _number(v) for m, v in r.means.items()},
                  "against_row_1": {m: t.as_dict() for m, t in r.tests.items()}} for r in sweep.rows],
        "best": None if b is None else {
            "metric": b.metric, "top": b.top, "separated": b.separated, "rival": b.rival,
            "difference": b.difference, "questions_to_separate": b.needed,
            "tests": {str(j): t.as_dict() for j, t in b.tests.items()}},
    }


def render_json(sweep: SweepTable) -> str:
    return json.dumps(sweep_dict(sweep), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _csv_field(value) -> str:
    text = "" if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def render_csv(sweep: SweepTable) -> str:
    """One line per row; per metric its mean and, against row 1, the change, the interval,
    the Holm-corrected p-value and the mark (RFC 4180 quoting, CRLF line ends)."""
    header = ["row", "label", "failed"]
    for m in sweep.metrics:
        header += [m, f"{m} delta", f"{m} ci_low", f"{m} ci_high", f"{m} p_holm", f"{m} significant"]
    lines = [header]
    for r in sweep.rows:
        line = [r.number, r.label, r.failed]
        for m in sweep.metrics:
            t = r.tests.get(m)
            line += [_number(r.means[m])] + ([t.delta, t.ci_low, t.ci_high, t.p_adjusted, t.significant]
                                              if t is not None else [None] * 5)
        lines.append(line)
    return "".join(",".join(_csv_field(v) for v in line) + "\r\n" for line in lines)


RENDERERS = {"markdown": render_markdown, "json": render_json, "csv": render_csv}
