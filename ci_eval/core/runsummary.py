"""A plain-text summary of one run, for the terminal (the PR comment is render.py's).

What was wrong but survivable is summarised here, a line per kind with a count and an
example, never a line per question: a warning only in the JSON is a warning nobody reads.
"""

from __future__ import annotations

from ci_eval.core.results import WARNING_KINDS


def index_drift(artefact: dict) -> str | None:
    built = (artefact.get("gold_set") or {}).get("index_version")
    current = (artefact.get("index") or {}).get("version")
    if built and current and built != current:
        return f"the gold set was built against index {built!r}; the current index is {current!r}"
    return None


def _examples(note) -> str:
    """A Note's first few ids, and how many more there are."""
    shown = ", ".join(note.ids)
    return shown + (f" and {note.count - len(note.ids)} more" if note.count > len(note.ids) else "")


def _stale_line(header: dict, columns) -> str:
    if not header["index"]["checked"]:
        return "stale gold: not checked (no index manifest configured)"
    stale = header["summary"]["stale"]
    if not stale["ids"]:
        return "stale gold: none"
    citing = columns.citing_stale
    return (f"stale gold: {stale['ids']} distinct gold id(s) missing from the index, in "
            f"{citing.count} question(s) ({_examples(citing)}); {stale['questions']} question(s) "
            "left with no relevant live gold are kept out of the means")


def warning_lines(header: dict, columns) -> list[str]:
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


def _error_lines(columns) -> list[str]:
    errors = columns.errors
    if not errors.count:
        return []
    also = f" ({errors.unanswerable} of them unanswerable)" if errors.unanswerable else ""
    lines = [f"retriever errors: {errors.count} question(s){also}; first: {errors.first[0]}: {errors.first[1]}"]
    if errors.not_run:
        why = errors.not_run_error.removeprefix("not run: ")
        lines.append(f"stopped early: {why}; the other {errors.not_run} are recorded as errors, not run")
    return lines


def run_summary(header: dict, columns) -> str:
    """``header``: the artefact's top-level keys (summary included); ``columns``: the
    core.run_columns.RunColumns gathered from its rows."""
    from tabulate import tabulate

    s = header["summary"]
    overall = s["overall"]
    rows = [[m, f"{overall['means'][m]:.4f}"] for m in header["metrics"] if m in overall["means"]]
    lines = [
        f"{overall['count']} answerable question(s) measured at k={header['k']}",
        tabulate(rows, headers=["metric", "mean"], tablefmt="simple", disable_numparse=True),
        _stale_line(header, columns),
    ]
    drift = index_drift(header)
    if drift:
        lines.append(f"index drift: {drift}")
    u = s["unanswerable"]
    if u["count"]:
        cutoff = "no cutoff configured" if u["cutoff"] is None else f"cutoff {u['cutoff']:g}"
        lines.append(f"unanswerable: {u['abstained']}/{u['count']} abstained ({cutoff})")
    judged = s.get("judged_at_k") or {}
    if judged.get("mean") is not None and judged["mean"] < 1:
        lines.append(f"judged@{judged['k']}: {judged['mean']:.3f} (some top-{judged['k']} results were never "
                     "judged and count as not relevant; ci-eval label judges them)")
    lines += warning_lines(header, columns)
    lines += _error_lines(columns)
    if s.get("latency_ms"):
        lat = s["latency_ms"]
        lines.append(f"latency: mean {lat['mean']:.1f} ms, p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms")
    return "\n".join(lines)
