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


def _change(t, with_ci: bool = True) -> str:
    mark = f" {MARK}" if t.significant else ""
    return f"{signed(t.delta)} {ci_text(t)}{mark}" if with_ci else f"{signed(t.delta)}{mark}"


def _cell(row, m: str) -> str:
    """The mean; in brackets the step from the row before (with its interval), then, from
    row 3 on, the change from row 1."""
    mean = f3(row.means[m])
    step = (row.step or {}).get(m)
    if step is None or step.p_value is None:
        return mean
    first = row.tests.get(m)
    if row.number <= 2 or first is None or first.p_value is None:
        return f"{mean} ({_change(step)})"
    return f"{mean} ({_change(step)}; {_change(first, False)} from 1)"


def family_sentence(sweep: SweepTable) -> str:
    """The one family, stated once: what its tests are and how they are corrected."""
    best = "" if sweep.best is None else (f", and the best row against every other on "
                                          f"{metric_md(sweep.best.metric)}")
    return (f"{MARK}: significant at {ALPHA:g} after Holm's correction over one family of "
            f"{plural(sweep.family, 'paired test')} (each row against the one before and against row 1 "
            f"on every metric{best}; each pair of rows tested once), which the marks and every "
            "sentence here use.")


def verdict(sweep: SweepTable) -> str:
    """The sentence under the table: the provably best row, or the two that cannot be told
    apart and how many questions would, or why the rows cannot be ranked."""
    b = sweep.best
    if b is None and sweep.reason:
        return f"No best configuration named: {sweep.reason}. Add evidence_recall@k (span gold) to rank them."
    if b is None:
        return "One configuration, or no question every row measured: nothing to compare."
    top = sweep.rows[b.top - 1]
    across = (" (the rows search different indexes: decided on the evidence, which compares "
              "chunkings, not on chunk-level metrics)") if b.chunkings else ""
    if b.separated:
        return (f"**Best: row {b.top}, {escape_md(top.label)}**: ahead of every other row on "
                f"{metric_md(b.metric)} ({f3(top.means[b.metric])}; {sweep.n} questions, the table's "
                f"family){across}.")
    rival = sweep.rows[b.rival - 1]
    which = "the top two" if _runner_up(sweep) == b.rival else f"rows {b.top} and {b.rival}"
    head = (f"No provably best configuration: {which} ({escape_md(top.label)}; "
            f"{escape_md(rival.label)}) are not separable on {sweep.n} questions{across}")
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
        lines.append(f"Means over the {plural(sweep.n, 'question')} every row measured, the rows read as a "
                     f"ladder: in brackets the step from the row before and its paired 95 % interval "
                     f"(sign-flip permutation test), then the change from row 1. " + family_sentence(sweep))
    if sweep.left_out:
        lines.append(f"{plural(sweep.left_out, 'question')} left out: not measured by every row.")
    failed = [r for r in sweep.rows if r.failed]
    if failed:
        lines.append("The retriever failed on " + "; ".join(
            f"{plural(r.failed, 'question')} of row {r.number}" for r in failed) + " (scored 0).")
    noted = [r for r in sweep.rows if r.notes]
    if noted:
        lines += ["", "Notes:"]
        lines += [f"- row {r.number} ({escape_md(r.label)}): {escape_md(note)}" for r in noted for note in r.notes]
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
        "decided_on": sweep.decided_on,
        "not_ranked": sweep.reason,
        "rows": [{"row": r.number, "label": r.label, "failed": r.failed,
                  "means": {m: _number(v) for m, v in r.means.items()},
                  "against_row_1": {m: t.as_dict() for m, t in r.tests.items()},
                  "against_previous": {m: t.as_dict() for m, t in (r.step or {}).items()},
                  "notes": list(r.notes)} for r in sweep.rows],
        "best": None if b is None else {
            "metric": b.metric, "top": b.top, "separated": b.separated, "rival": b.rival,
            "across_chunkings": b.chunkings,
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
    """One line per row; per metric its mean and, against row 1 and against the row before,
    the change, the interval, the Holm-corrected p-value and the mark (RFC 4180 quoting,
    CRLF line ends)."""
    header = ["row", "label", "failed"]
    for m in sweep.metrics:
        header += [m, f"{m} delta", f"{m} ci_low", f"{m} ci_high", f"{m} p_holm", f"{m} significant"]
        header += [f"{m} step", f"{m} step ci_low", f"{m} step ci_high", f"{m} step p_holm",
                   f"{m} step significant"]
    lines = [header]
    for r in sweep.rows:
        line = [r.number, r.label, r.failed]
        for m in sweep.metrics:
            line.append(_number(r.means[m]))
            for t in (r.tests.get(m), (r.step or {}).get(m)):
                line += [t.delta, t.ci_low, t.ci_high, t.p_adjusted, t.significant] if t is not None else [None] * 5
        lines.append(line)
    return "".join(",".join(_csv_field(v) for v in line) + "\r\n" for line in lines)


RENDERERS = {"markdown": render_markdown, "json": render_json, "csv": render_csv}
