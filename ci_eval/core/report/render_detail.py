"""The comment's detail sections: the failure matrix, stale gold, the unanswerable cutoff,
gold-set edits, tags, the trend and the run's details."""

from __future__ import annotations

from ci_eval.core.answers import SourceView, join_lines, source_view
from ci_eval.core.compare.cutoff import NO_GAP, RANKS, CutoffSide, histogram
from ci_eval.core.compare.matrix import CELL_LABELS, CELLS
from ci_eval.core.compare.stats import mean
from ci_eval.core.report.escape import code_span, escape_md
from ci_eval.core.report.markdown import details, ids, metric, more, question_cell, short_sha, table
from ci_eval.core.report.render_context import ReportContext
from ci_eval.core.report.render_stages import breakdown
from ci_eval.core.report.render_verdict import headline_metric
from ci_eval.core.textfmt import f3, plural, signed

SPARKS = "▁▂▃▄▅▆▇█"


def matrix(ctx: ReportContext, limit: int | None) -> str:
    mx = ctx.diff.matrix
    if not mx.available:
        source = answers_source(ctx.diff.head_info.answers, None)
        return f"#### Failure matrix\n\n{source or mx.hint}"
    rows = []
    for cell in CELLS:
        base = str(mx.base.count(cell)) if mx.base else "—"
        rows.append([CELL_LABELS[cell], base, str(mx.head.count(cell))])
    out = ["#### Failure matrix (gold retrieved at k × answer correct)"]
    source = answers_source(ctx.diff.head_info.answers, ctx.diff.base_info.answers if ctx.diff.base_info else None)
    if source:
        out.append(source)
    out.append(table(["cell", "base", "head"], rows))
    lost_at = breakdown(ctx.diff.stages)
    if lost_at:
        out.append(f"Gold not held at the last stage, by the stage that lost it: {lost_at}.")
    largest = mx.head.largest
    stage = {"retrieved_wrong": "generation (prompt, chunk count and order, model)",
             "missed_wrong": "retrieval (chunking, embeddings, hybrid search)",
             "missed_correct": "the corpus: answers come from the model's own knowledge"}
    if len(largest) == 1:
        out.append(f"Largest failure cell: **{CELL_LABELS[largest[0]]}**; next effort goes to "
                   f"{stage[largest[0]]}.")
    elif largest:
        cells = " and ".join(f"**{CELL_LABELS[c]}**" for c in largest)
        out.append(f"Largest failure cells, a tie at {mx.head.count(largest[0])} each: {cells}; "
                   "no single stage stands out: "
                   + "; ".join(stage[c] for c in largest) + ".")
    lines = []
    for kind, label in (("retrieval_regression", "Retrieval regressions (retrieved → missed)"),
                        ("generation_regression",
                         "Generation regressions (correct → wrong, still retrieved)"),
                        ("retrieval_fix", "Retrieval fixes (missed → retrieved)"),
                        ("generation_fix", "Generation fixes (wrong → correct)")):
        moved = mx.of_kind(kind)
        if moved:
            lines.append(f"- {label}: {ids((t.id for t in moved), limit, ctx.full_report)}")
    if mx.own_knowledge:
        lines.append(f"- Answered from the model's own knowledge (not retrieved, correct): "
                     f"{ids(mx.own_knowledge, limit, ctx.full_report)}")
    if mx.head.unknown and not source:  # the source line counted them already
        lines.append(f"- {plural(mx.head.unknown, 'measured question')} without an answer "
                     "verdict")
    if lines:
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _where(view: SourceView) -> str:
    """Tool, file or command, and commit, each user string inert."""
    tool = escape_md(view.tool, 100)
    if view.where is None:
        return tool  # the demo's stand-in: no file
    at = ""
    if view.changed:
        at = ", not committed (written in this job or changed locally)"
    elif view.commit:
        at = f", last committed in {short_sha(view.commit)}"
    return f"{tool} {code_span(view.where, 80, False)}{at}"


def answers_source(head: dict | None, base: dict | None) -> str:
    """The matrix's source line: where the answer verdicts came from (tool, file, commit),
    what counts as correct, and what the join left out, counted aloud."""
    if not head:
        return ""
    view = source_view(head)
    rule = "" if view.rule is None else f" ({escape_md(view.rule, 80)} counts as correct)"
    text = (f"Answer correctness from {_where(view)}{rule}: "
            f"{view.matched} of {plural(view.questions, 'gold question')} have a verdict.")
    left = [escape_md(line, 300) for line in join_lines(head)]
    if left:
        text += " " + "; ".join(left[:1] + [line[0].lower() + line[1:] for line in left[1:]]) + "."
    if base and _where(source_view(base)) != _where(view):
        text += f" Base: {_where(source_view(base))}."
    return text


def stale(ctx: ReportContext, limit: int | None) -> str:
    diff = ctx.diff
    st = diff.stale
    if not diff.head_info.index_checked:
        return ("#### Stale gold\n\nNot checked: no index manifest is configured (`[index]` "
                "`manifest` or `callable`), so a gold id that left the index reads as a miss here.")
    if not st.head and not st.resolved:
        return ""
    hv = code_span(diff.head_info.index_version or "unversioned", 40, False)
    out = ["#### Stale gold"]
    drift = ""
    if diff.index_changed:
        drift = (f" The index changed: {code_span(diff.base_info.index_version or '?', 40, False)}"
                 f" → {hv}.")
    gv = diff.head_info.gold_index_version
    if gv and gv != diff.head_info.index_version:
        drift += f" The gold set was built against {code_span(gv, 40, False)}."
    if st.head:
        out.append(f"{plural(len(st.head), 'question')} point at "
                   f"{plural(st.head_ids, 'distinct gold id')} missing from index {hv}: stale labels, "
                   f"not a regression. They are kept out of the comparison and of regression "
                   f"rules (only `max_stale` counts them).{drift} Re-validate the gold set.")
        drifted = diff.head_info.drifted
        if drifted:
            out.append(f"{plural(len(drifted), 'of these ids', 'of these ids')} drifted: "
                       f"{'it is' if len(drifted) == 1 else 'they are'} still in the index under the "
                       "same id, but the text no longer matches the gold set's anchor (a re-chunking "
                       "that kept positional ids), so the label points at other text.")
        shown = st.head if limit is None else st.head[:limit]
        new = {q.id for q in st.new}
        rows = [[question_cell(q.id, q.question, 60),
                 ", ".join(code_span(i, 50) + (" (drifted)" if i in drifted else "") for i in q.ids[:5])
                 + (f" +{len(q.ids) - 5}" if len(q.ids) > 5 else ""),
                 ("new, " if q.id in new else "") + q.status]
                for q in shown]
        out.append(table(["question", "missing gold ids", "status"], rows))
        if len(st.head) > len(shown):
            out[-1] += more(len(st.head) - len(shown), "stale questions", ctx.full_report)
        from ci_eval.core.gold.remap import remap_hint  # the remap machinery: only for stale gold

        hint = remap_hint(diff.head_info.remap)
        if hint:
            out.append(hint)
    if st.resolved:
        out.append(f"Resolved since the base: {ids((q.id for q in st.resolved), limit, ctx.full_report)}")
    return "\n\n".join(out)


def _cutoff_row(label: str, side: CutoffSide) -> list[str]:
    gap = side.gap
    if not side.checkable:
        gap_text, suggested = "—", "—"
    elif side.has_gap and gap is None:
        gap_text, suggested = "every unanswerable returned nothing", "—"
    elif gap is None:
        lo_n, hi_n = side.overlap
        best = side.least_wrong
        gap_text = f"none ({lo_n} + {hi_n} overlap)"
        suggested = f"{best[0]:.3g} (least wrong)" if best else "—"
    else:
        gap_text, suggested = f"{gap[0]:.3g} … {gap[1]:.3g}", f"{side.suggested:.3g}"
    cut = "—" if side.cutoff is None else f"{side.cutoff:.3g}"
    fnf = "—" if side.cutoff is None else f"{len(side.false_not_found)}/{len(side.answerable)}"
    fa = "—" if side.cutoff is None else f"{len(side.false_answers)}/{len(side.unanswerable)}"
    return [label, cut, fnf, fa, gap_text, suggested]


def _least_wrong(side: CutoffSide) -> str:
    best = side.least_wrong
    if best is None:
        return ""
    value, fnf, fa = best
    return (f" The cutoff with the fewest mistakes is **{value:.3g}**: "
            f'{fnf} false "not found" '
            f"(answerable questions under it) and {plural(fa, 'false answer')} "
            "(unanswerable questions at or above it).")


def cutoff(ctx: ReportContext, limit: int | None, with_histogram: bool = True) -> str:
    c = ctx.diff.cutoff
    head = c.head
    if not head.unanswerable:
        return ("#### Unanswerable questions and the cutoff\n\nNo unanswerable questions in "
                "the gold set, so the \"I could not find this\" cutoff cannot be checked. Add "
                "a few questions with no gold ids, marked unanswerable.")
    out = ["#### Unanswerable questions and the cutoff"]
    if head.ranks:  # no histogram, no table: a cutoff over ranks would only count results
        return "\n\n".join(out + [f"The scores are ranks: {RANKS}."])
    if head.checkable and not head.has_gap:
        lo_n, hi_n = head.overlap
        out.append(f"**{NO_GAP[0].upper() + NO_GAP[1:]}.** {plural(lo_n, 'answerable question')}"
                   f" score at or below the best-scoring unanswerable one, and "
                   f"{plural(hi_n, 'unanswerable question')} at or above the worst-scoring "
                   "answerable one: no cutoff separates them." + _least_wrong(head))
    elif head.gap is not None:
        out.append(f"Answerable and unanswerable top scores are separated: the gap runs from "
                   f"{head.gap[0]:.3g} to {head.gap[1]:.3g}; its midpoint "
                   f"**{head.suggested:.3g}** is the cutoff it suggests.")
    rows = []
    if c.base is not None:
        rows.append(_cutoff_row("base", c.base))
    rows.append(_cutoff_row("head", head))
    out.append(table(["run", "cutoff", 'false "not found"', "false answers", "gap",
                      "suggested"], rows))
    if any(s is not None and s.checkable and not s.has_gap for s in (c.base, head)):
        out.append('<sub>"none (a + b overlap)": a answerable questions score at or below the '
                   "best-scoring unanswerable one, b unanswerable questions at or above the "
                   "worst-scoring answerable one. The least-wrong cutoff minimises false "
                   '"not found" plus false answers.</sub>')
    fa = head.false_answers
    if fa:
        out.append(f"Answered although unanswerable (top score ≥ cutoff): {ids(fa, limit, ctx.full_report)}")
    if with_histogram:
        out.append("```text\n" + histogram(head) + "\n```")
    return "\n\n".join(out)


def goldset(ctx: ReportContext, limit: int | None) -> str:
    g = ctx.diff.goldset
    if not g.any:
        return ""
    sha = ""
    if g.base_sha256 and g.head_sha256 and g.base_sha256 != g.head_sha256:
        sha = f" (sha256 {short_sha(g.base_sha256)} → {short_sha(g.head_sha256)})"
    out = [f"#### Gold set changed in this PR{sha}",
           (f"{len(g.added)} added, {len(g.removed)} removed, {len(g.relabelled)} relabelled; "
            f"the comparison uses only the {plural(len(ctx.diff.compared), 'question')} "
            "both sides share with the same labels.")]
    rows = []
    for what, refs in (("added", g.added), ("removed", g.removed),
                       ("relabelled", g.relabelled)):
        for r in refs:
            rows.append([question_cell(r.id, r.question, 70),
                         what + (f": {escape_md(r.note, 40)}" if r.note else "")])
    shown = rows if limit is None else rows[:limit]
    out.append(table(["question", "change"], shown))
    if len(rows) > len(shown):
        out[-1] += more(len(rows) - len(shown), "gold-set changes", ctx.full_report)
    return "\n\n".join(out)


def _tag_mark(test) -> str:
    """A tag's delta marked only when significant within the tag family (Holm)."""
    if test is None or not test.significant:
        return ""
    return " ▼" if test.delta < 0 else " ▲"


def tags(ctx: ReportContext, limit: int | None) -> str:
    diff = ctx.diff
    names = [n for n in (f"hit@{diff.k}", "mrr") if diff.metric(n) is not None]
    if not names:
        names = [m.name for m in diff.metrics[:2]]
    if diff.has_base and diff.tags:
        # worst first: by the largest fall over the metrics the table shows
        tags = sorted(diff.tags, key=lambda t: (t.worst(names), t.tag))
        rows = []
        for t in tags:
            cells = [escape_md(t.tag, 40), str(t.n)]
            for n in names:
                vals = {m: (b, h) for m, b, h in t.metrics}
                if n in vals:
                    b, h = vals[n]
                    cells.append(f"{f3(b)} → {f3(h)} ({signed(h - b)}){_tag_mark(t.test(n))}")
                else:
                    cells.append("—")
            rows.append(cells)
        headers = ["tag", "n"] + [metric(n) for n in names]
    else:
        by_tag: dict[str, list] = {}
        for q in diff.head_questions:
            if q.measured:
                for t in set(q.tags):
                    by_tag.setdefault(t, []).append(q)
        if not by_tag:
            return ""
        rows = [[escape_md(t, 40), str(len(qs))]
                + [f3(mean(q.value(n) for q in qs)) for n in names]
                for t, qs in sorted(by_tag.items())]
        headers = ["tag", "n"] + [metric(n) for n in names]
    shown = rows if limit is None else rows[:limit]
    text = "#### By tag (worst first)\n\n" if diff.has_base else "#### By tag\n\n"
    text += table(headers, shown)
    if len(rows) > len(shown):
        text += more(len(rows) - len(shown), "tags", ctx.full_report)
    return text


def sparkline(values: list[float]) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        return SPARKS[3] * len(values)
    return "".join(SPARKS[min(int((v - lo) / (hi - lo) * 7 + 0.5), 7)] for v in values)


def trend(ctx: ReportContext) -> str:
    return "\n\n".join(part for part in (_headline_trend(ctx), _tag_trends(ctx), _failing_on_base(ctx)) if part)


def _headline_trend(ctx: ReportContext) -> str:
    diff = ctx.diff
    if not diff.history:
        return ""
    m = headline_metric(diff)
    if m is None:
        return ""
    values = [dict(means)[m.name] for _, _, means in diff.history[-19:]
              if m.name in dict(means)]
    if m.head_overall is not None:
        values.append(m.head_overall)
    if len(values) < 2:
        return ""
    return (f"**Trend** {metric(m.name)} over the last {len(values)} runs (this one last): "
            f"{sparkline(values)} {f3(values[0])} → {f3(values[-1])}")


TAG_TRENDS = 8  # tags drawn, those whose hit@k fell most over the window first


def _branch(ctx: ReportContext) -> str:
    return escape_md(ctx.branch_name, 60)


def _tag_trends(ctx: ReportContext) -> str:
    """Each tag's hit@k over the base branch's recent runs, as a sparkline: the tags that
    fell most first."""
    recent = ctx.recent
    if recent is None or len(recent.runs) < 2:
        return ""
    lines = []
    for tag, values in recent.tags.items():
        points = [v for v in values if v is not None]
        if len(points) >= 2:
            lines.append((points[-1] - points[0], tag, points))
    if not lines:
        return ""
    lines.sort(key=lambda line: (line[0], line[1]))
    shown = [f"{code_span(tag, 30)} {sparkline(points)} {f3(points[0])} → {f3(points[-1])}"
             for _, tag, points in lines[:TAG_TRENDS]]
    rest = f" (+{len(lines) - TAG_TRENDS} more tags)" if len(lines) > TAG_TRENDS else ""
    return (f"**By tag** hit@{recent.k} over the last {len(recent.runs)} runs on {_branch(ctx)}: "
            + " · ".join(shown) + rest)


FAILING_LISTED = 10


def _failing_on_base(ctx: ReportContext) -> str:
    """Questions the base branch lost in its recent runs, with the commit since which: not this
    PR's doing, and easy to take for it."""
    from ci_eval.core.compare.recent_runs import failing_on_base

    failing = failing_on_base(ctx.recent)
    if not failing:
        return ""
    shown = [f"{code_span(qid, 60)} since {code_span(sha[:7] or '?', 10)} (missed in the last {plural(ago, 'run')})"
             for qid, sha, ago in failing[:FAILING_LISTED]]
    rest = f" (+{len(failing) - FAILING_LISTED} more)" if len(failing) > FAILING_LISTED else ""
    return (f"**Failing on {_branch(ctx)}** ({len(failing):,}, retrieved there before): "
            + ", ".join(shown) + rest)


def run_details(ctx: ReportContext, limit: int | None) -> str:
    diff = ctx.diff
    lines = []
    if diff.config:
        shown = diff.config if limit is None else diff.config[:limit]
        rows = [[code_span(c.path, 80), code_span(c.base, 60), code_span(c.head, 60)]
                for c in shown]
        lines.append(table(["config", "base", "head"], rows)
                     + (more(len(diff.config) - len(shown), "config changes", ctx.full_report)
                        if len(diff.config) > len(shown) else ""))
    if diff.latency:
        lines.append("Latency (ms): " + ", ".join(
            f"{stat} {_ms(b)} → {_ms(h)}" if diff.has_base else f"{stat} {_ms(h)}"
            for stat, b, h in diff.latency))
    hi = diff.head_info
    head = short_sha(hi.sha) if hi.sha else "(no git sha)"
    lines.append(f"Head {head}, k={hi.k}, {plural(hi.questions, 'question')}, "
                 f"gold set sha256 {short_sha(hi.gold_sha256)}.")
    return details("Run details", "\n\n".join(lines))


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"
