"""``ci-eval history`` in words: markdown for people, JSON a piece at a time for programs.

The markdown names the questions failing now (since which run, broken by which commit),
the flapping ones, and each tag's headline metrics over the runs with the runs where they
moved beyond noise; it lists at most ``LISTED`` questions per section, the JSON and CSV
every one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

from ci_eval.core.compare.history import ABSENT, ALL, MISSED, NO_GOLD, History, QuestionLine, TagPoint
from ci_eval.core.report.escape import code_span, escape_md
from ci_eval.core.report.markdown import metric as metric_cell
from ci_eval.core.report.markdown import short_sha, table
from ci_eval.core.report.render_detail import sparkline
from ci_eval.core.textfmt import f3, plural

LISTED = 50
_MARK = {1: "●", 0: "○"}


def states_text(ranks: tuple[int, ...], k: int) -> str:
    """A question's runs at a glance: ● hit at k, ○ missed, · no state."""
    return "".join("·" if r in (ABSENT, NO_GOLD) else _MARK[int(r != MISSED and r <= k)] for r in ranks)


def _run_ref(history: History, run: int | None) -> str:
    if run is None:
        return "—"
    mark = history.runs[run]
    return f"run {run + 1} ({short_sha(mark.sha) if mark.sha else escape_md(mark.label, 60)})"


def headline(history: History) -> tuple[str, ...]:
    """The metrics the markdown shows per tag: hit@k, and MRR when measured."""
    return tuple(m for m in (history.hit_metric, "mrr") if m in history.metrics) or history.metrics[:1]


def render_markdown(history: History, lines: list[QuestionLine], trends: dict) -> str:
    k, runs = history.k, history.runs
    failing = [line for line in lines if line.failing_since is not None]
    flapping = [line for line in lines if line.flapping]
    parts = [f"## Retrieval history: {plural(len(runs), 'run')}, {plural(len(lines), 'question')}",
             f"State is hit@{k} (● retrieved in the top {k}, ○ missed, · not in the run or unanswerable), "
             f"oldest run first, from {_run_ref(history, 0)} to {_run_ref(history, len(runs) - 1)}."]
    parts.append(_failing_section(history, failing))
    parts.append(_flapping_section(history, flapping))
    for name in headline(history):
        parts.append(_tag_section(history, trends, name))
    parts.append(_runs_section(history))
    return "\n\n".join(p for p in parts if p) + "\n"


def _more(shown: int, total: int) -> str:
    return f"\n\n(+{total - shown} more; `--format json` or `--format csv` lists every one)" if total > shown else ""


def _failing_section(history: History, failing: list[QuestionLine]) -> str:
    if not failing:
        return f"### Failing now\n\nNo question misses its gold chunk at k={history.k} in the last run."
    rows = []
    for line in failing[:LISTED]:
        broke = _run_ref(history, line.broken_by) if line.broken_by is not None else f"never in the top {history.k}"
        rows.append([code_span(line.id, 60), _run_ref(history, line.failing_since), broke,
                     "yes" if line.flapping else "", states_text(line.ranks, history.k)])
    return (f"### Failing now ({len(failing):,})\n\n"
            + table(["question", "failing since", "broken by", "flapping", "runs"], rows)
            + _more(min(len(failing), LISTED), len(failing)))


def _flapping_section(history: History, flapping: list[QuestionLine]) -> str:
    if not flapping:
        return ("### Flapping\n\nNo question changed state 3 or more times between runs with the same gold "
                "and retriever config.")
    rows = [[code_span(line.id, 60), str(line.changes), f"{line.misses} of {line.hits + line.misses}",
             states_text(line.ranks, history.k)] for line in flapping[:LISTED]]
    return (f"### Flapping ({len(flapping):,}): state changed with the same gold and config\n\n"
            + table(["question", "changes", "missed in", "runs"], rows)
            + _more(min(len(flapping), LISTED), len(flapping)))


def _moves(points: list[TagPoint]) -> str:
    marks = [f"{i + 1}{'▲' if (p.delta or 0) > 0 else '▼'}" for i, p in enumerate(points) if p.significant]
    return ", ".join(marks) if marks else "none"


def _tag_section(history: History, trends: dict, name: str) -> str:
    rows = []
    for tag, per_metric in trends.items():
        points = per_metric[name]
        means = [p.mean for p in points if p.mean is not None]
        if not means:
            continue
        rows.append([("all questions" if tag == ALL else code_span(tag, 40)), f"{points[-1].n:,}",
                     sparkline(means), f"{f3(means[0])} → {f3(means[-1])}", _moves(points)])
    return (f"### {metric_cell(name)} by tag over the runs\n\n"
            "Moves beyond noise: the run's paired test against the run before (▲ up, ▼ down).\n\n"
            + table(["tag", "questions", "trend", "first → last", "moved beyond noise at run"], rows))


def _runs_section(history: History) -> str:
    rows = [[str(i + 1), short_sha(run.sha) if run.sha else "—", escape_md(run.created_at or "—", 40),
             escape_md(run.label, 60), run.config_key] for i, run in enumerate(history.runs)]
    return ("<details><summary>Runs</summary>\n\n"
            + table(["run", "commit", "created", "file", "config"], rows) + "\n\n</details>")


def _number(value: float) -> float | None:
    # per-question values are held as float32: 6 digits are what they carry
    return None if math.isnan(value) else float(f"{value:.6g}")


def json_pieces(history: History, lines: list[QuestionLine], trends: dict) -> Iterator[str]:
    """The whole history as one JSON document, a question a piece, worst first."""
    runs = [{"run": i + 1, "sha": r.sha, "created_at": r.created_at, "file": r.label, "config": r.config_key}
            for i, r in enumerate(history.runs)]
    head = {"k": history.k, "metrics": list(history.metrics), "runs": runs,
            "tags": {tag: {m: [{"mean": p.mean, "n": p.n, "delta": p.delta, "beyond_noise": p.significant}
                               for p in points] for m, points in per.items()} for tag, per in trends.items()}}
    text = json.dumps(head, indent=1, ensure_ascii=False)
    yield text[:-2] + ',\n "questions": [\n'
    for n, line in enumerate(lines):
        i = line.row
        values = {m: [_number(v) for v in history.values[i, :, j].tolist()] for j, m in enumerate(history.metrics)}
        item = {"id": line.id, "tags": list(line.tags),
                "first_gold_rank": [None if r <= 0 else r for r in line.ranks],
                "hit": [None if r in (ABSENT, NO_GOLD) else (r != MISSED and r <= history.k) for r in line.ranks],
                "in_run": [r != ABSENT for r in line.ranks], "metrics": values,
                "failing_since": _ref(history, line.failing_since), "broken_by": _ref(history, line.broken_by),
                "flapping": line.flapping, "changes": line.changes, "misses": line.misses, "hits": line.hits}
        yield ("  " if n == 0 else ",\n  ") + json.dumps(item, ensure_ascii=False, separators=(",", ":"))
    yield "\n ]\n}\n"


def _ref(history: History, run: int | None) -> dict | None:
    return None if run is None else {"run": run + 1, "sha": history.runs[run].sha}
