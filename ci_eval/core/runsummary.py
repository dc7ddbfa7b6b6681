"""A plain-text summary of one run, for the terminal (the PR comment is render.py's).

What was wrong but survivable is summarised here, a line per kind with a count and an
example, never a line per question: a warning only in the JSON is a warning nobody reads.
"""

from __future__ import annotations

from ci_eval.core.results import STOPPED_EARLY, WARNING_KINDS


def index_drift(artefact: dict) -> str | None:
    built = (artefact.get("gold_set") or {}).get("index_version")
    current = (artefact.get("index") or {}).get("version")
    if built and current and built != current:
        return f"the gold set was built against index {built!r}; the current index is {current!r}"
    return None


def _examples(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _stale_line(artefact: dict) -> str:
    if not artefact["index"]["checked"]:
        return "stale gold: not checked (no index manifest configured)"
    stale = artefact["summary"]["stale"]
    if not stale["ids"]:
        return "stale gold: none"
    citing = [q["id"] for q in artefact["questions"] if q["stale"]]
    return (f"stale gold: {stale['ids']} distinct gold id(s) missing from the index, in "
            f"{len(citing)} question(s) ({_examples(citing)}); {stale['questions']} question(s) "
            "left with no relevant live gold are kept out of the means")


def warning_lines(artefact: dict) -> list[str]:
    """Per-question warnings, one line per kind, with the number of questions and examples."""
    questions = artefact["questions"]
    lines = []
    for kind in WARNING_KINDS:
        hit = [q["id"] for q in questions if any(kind in w for w in q.get("warnings") or ())]
        if hit:
            lines.append(f"warning: {len(hit)} question(s): {kind} ({_examples(hit)})")
    depth = (artefact.get("config") or {}).get("retriever", {}).get("depth")
    answered = [q for q in questions if q["status"] != "error"]
    empty = [q["id"] for q in answered if not q["ranking"] and not q["unanswerable"]]
    if empty:
        lines.append(f"warning: {len(empty)} answerable question(s) got no result at all ({_examples(empty)})")
    if depth:
        short = [q["id"] for q in answered if 0 < len(q["ranking"]) < depth]
        if short:
            lines.append(f"warning: {len(short)} question(s) got fewer than the {depth} results asked for "
                         f"(depth) ({_examples(short)})")
    return lines


def _error_lines(artefact: dict) -> list[str]:
    errors = [q for q in artefact["questions"] if q["status"] == "error"]
    if not errors:
        return []
    unanswerable = sum(q["unanswerable"] for q in errors)
    also = f" ({unanswerable} of them unanswerable)" if unanswerable else ""
    lines = [f"retriever errors: {len(errors)} question(s){also}; first: {errors[0]['id']}: {errors[0]['error']}"]
    not_run = [q for q in errors if (q["error"] or "").startswith(STOPPED_EARLY.split("{")[0])]
    if not_run:
        why = not_run[0]["error"].removeprefix("not run: ")
        lines.append(f"stopped early: {why}; the other {len(not_run)} are recorded as errors, not run")
    return lines


def run_summary(artefact: dict) -> str:
    from tabulate import tabulate

    s = artefact["summary"]
    overall = s["overall"]
    rows = [[m, f"{overall['means'][m]:.4f}"] for m in artefact["metrics"] if m in overall["means"]]
    lines = [
        f"{overall['count']} answerable question(s) measured at k={artefact['k']}",
        tabulate(rows, headers=["metric", "mean"], tablefmt="simple", disable_numparse=True),
        _stale_line(artefact),
    ]
    drift = index_drift(artefact)
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
    lines += warning_lines(artefact)
    lines += _error_lines(artefact)
    if s.get("latency_ms"):
        lat = s["latency_ms"]
        lines.append(f"latency: mean {lat['mean']:.1f} ms, p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms")
    return "\n".join(lines)
