"""A plain-text summary of one run, for the terminal (the PR comment is render.py's).

What was wrong but survivable is summarised here, a line per kind with a count and an
example, never a line per question: a warning only in the JSON is a warning nobody reads.
"""

from __future__ import annotations

from ci_eval.core.artefact.results import WARNING_KINDS
from ci_eval.core.artefact.run_head import RunHead, RunTotals


def index_drift(head: RunHead) -> str | None:
    """The gold set's index against the current one; None for span gold, which names
    documents and is resolved against whatever index the run has (drift is no news there)."""
    if head.gold_set.get("evidence"):
        return None
    built, current = head.gold_index_version, head.index_version
    if built and current and built != current:
        return f"the gold set was built against index {built!r}; the current index is {current!r}"
    return None


def _examples(note) -> str:
    """A Note's first few ids, and how many more there are."""
    shown = ", ".join(note.ids)
    return shown + (f" and {note.count - len(note.ids)} more" if note.count > len(note.ids) else "")


def _stale_line(totals: RunTotals, columns) -> str:
    if not totals.head.index_checked:
        return "stale gold: not checked (no index manifest configured)"
    if not totals.stale_ids:
        return "stale gold: none"
    citing = columns.citing_stale
    drifted = len(totals.head.drifted)
    how = (f"missing from the index or drifted ({drifted} still in it, naming other text than their anchor)"
           if drifted else "missing from the index")
    return (f"stale gold: {totals.stale_ids} distinct gold id(s) {how}, in "
            f"{citing.count} question(s) ({_examples(citing)}); {totals.stale_questions} question(s) "
            "left with no relevant live gold are kept out of the means")


def warning_lines(columns) -> list[str]:
    """Per-question warnings, one line per kind, with the number of questions and examples."""
    lines = []
    for kind in WARNING_KINDS:
        note = columns.warnings[kind]
        if note.count:
            lines.append(f"warning: {note.count} question(s): {kind} ({_examples(note)})")
    if columns.empty.count:
        lines.append(f"warning: {columns.empty.count} answerable question(s) got no result at all "
                     f"({_examples(columns.empty)})")
    if columns.short.count:
        depth = columns.depth
        lines.append(f"warning: {columns.short.count} question(s) got fewer than the {depth} results asked for "
                     f"(depth) ({_examples(columns.short)})")
    return lines


def error_lines(columns) -> list[str]:
    errors = columns.errors
    if not errors.count:
        return []
    also = f" ({errors.unanswerable} of them unanswerable)" if errors.unanswerable else ""
    lines = [f"retriever errors: {errors.count} question(s){also}; first: {errors.first[0]}: {errors.first[1]}"]
    if errors.not_run:
        why = errors.not_run_error.removeprefix("not run: ")
        lines.append(f"stopped early: {why}; the other {errors.not_run} are recorded as errors, not run")
    return lines


def run_summary(totals: RunTotals, columns) -> str:
    """``totals``: the written run's summary (core/artefact/run_head.run_totals); ``columns``: the
    core.run_columns.RunColumns gathered from its rows."""
    from tabulate import tabulate

    rows = [[m, f"{mean:.4f}"] for m, mean in totals.means]
    lines = [
        f"{totals.count} answerable question(s) measured at k={totals.head.k}",
        tabulate(rows, headers=["metric", "mean"], tablefmt="simple", disable_numparse=True),
        _stale_line(totals, columns),
    ]
    drift = index_drift(totals.head)
    if drift:
        lines.append(f"index drift: {drift}")
    u = totals.unanswerable
    if u.count:
        cutoff = "no cutoff configured" if u.cutoff is None else f"cutoff {u.cutoff:g}"
        lines.append(f"unanswerable: {u.abstained}/{u.count} abstained ({cutoff})")
    judged, k = totals.judged_mean, totals.judged_k
    if judged is not None and judged < 1:
        lines.append(f"judged@{k}: {judged:.3f} (some top-{k} results were never "
                     "judged and count as not relevant; ci-eval label judges them)")
    lines += warning_lines(columns)
    lines += error_lines(columns)
    if totals.latency_ms:
        mean, p50, p95 = totals.latency_ms
        lines.append(f"latency: mean {mean:.1f} ms, p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    return "\n".join(lines)
