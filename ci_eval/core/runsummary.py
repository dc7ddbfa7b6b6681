"""A plain-text summary of one run, for the terminal (the PR comment is render.py's)."""

from __future__ import annotations


def index_drift(artefact: dict) -> str | None:
    built = (artefact.get("gold_set") or {}).get("index_version")
    current = (artefact.get("index") or {}).get("version")
    if built and current and built != current:
        return f"the gold set was built against index {built!r}; the current index is {current!r}"
    return None


def run_summary(artefact: dict) -> str:
    from tabulate import tabulate

    s = artefact["summary"]
    overall = s["overall"]
    rows = [[m, f"{overall['means'][m]:.4f}"] for m in artefact["metrics"] if m in overall["means"]]
    lines = [
        f"{overall['count']} answerable question(s) measured at k={artefact['k']}",
        tabulate(rows, headers=["metric", "mean"], tablefmt="simple", disable_numparse=True),
    ]
    stale = s["stale"]
    if not artefact["index"]["checked"]:
        lines.append("stale gold: not checked (no index manifest configured)")
    elif stale["ids"]:
        lines.append(
            f"stale gold: {stale['ids']} gold id(s) missing from the index; "
            f"{stale['questions']} question(s) left with no live gold are kept out of the means"
        )
    else:
        lines.append("stale gold: none")
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
    if s["errors"]:
        first = next(q for q in artefact["questions"] if q["status"] == "error")
        lines.append(f"retriever errors: {s['errors']} question(s); first: {first['id']}: {first['error']}")
    if s.get("latency_ms"):
        lat = s["latency_ms"]
        lines.append(f"latency: mean {lat['mean']:.1f} ms, p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms")
    return "\n".join(lines)

