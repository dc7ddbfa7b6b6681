"""The comment's stage section: which stage of the pipeline lost the gold chunk
(core/compare/stages_report.py), and the multi-step calls' hits."""

from __future__ import annotations

from ci_eval.core.compare.stages_report import CallsReport, StagesReport
from ci_eval.core.report.escape import code_span, escape_md
from ci_eval.core.report.markdown import more, table
from ci_eval.core.report.render_context import ReportContext
from ci_eval.core.textfmt import f3, plural


def _name(name: str) -> str:
    return escape_md(name, 40)


def _rank(rank: int | None) -> str:
    return "—" if rank is None else str(rank)


def breakdown(report: StagesReport) -> str:
    """``pool 2 · rerank 3``: head's questions without gold at the last stage, by the stage
    that lost it ("" when none)."""
    return " · ".join(f"{_name(name)} {count}" for name, count in report.misses)


def _losses(report: StagesReport) -> list[str]:
    """One sentence per stage that lost gold or broke the invariant."""
    lines, before = [], None
    for s in report.head:
        name = _name(s.spec.name)
        if s.lost and before is None:
            lines.append(f"- {name} never held the gold in its {s.where} on {plural(s.lost, 'question')}.")
        elif s.lost:
            verb = "cut the gold out of its budget of" if s.spec.chars is not None else "dropped the gold out of its"
            lines.append(f"- {name} {verb} {s.where} on {plural(s.lost, 'question')} "
                         f"{_name(before.spec.name)} held in its {before.where}.")
        if s.added:
            lines.append(f"- ⚠ {name} holds ids that {_name(before.spec.name) if before else 'no stage'} "
                         f"did not have on {plural(s.added, 'question')}: a later stage only reorders or cuts "
                         "what came before, so its losses are measured against a list it did not take.")
        if s.reported:
            before = s
    return lines


def _calls_text(c: CallsReport) -> str:
    budget = "no budget" if c.budget is None else f"a budget of {c.budget:,} chunks sent"
    found = ", ".join(f"call {call}: {n}" for call, n in c.found_at) or "none"
    text = (f"**Multi-step retrieval** ({plural(c.questions, 'question')} answered in several calls, {budget}; "
            f"a hit is the first call that holds gold within the budget): found at {found}; "
            f"not found: {c.not_found}.")
    if c.hidden:
        text += (f" {plural(c.hidden, 'question')} found by a call "
                 f"{'is' if c.hidden == 1 else 'are'} missed by the final list cut at k.")
    return text


def stages(ctx: ReportContext, limit: int | None) -> str:
    report = ctx.diff.stages
    if report.empty:
        return ""
    out = []
    if report.chain:
        headers = ["stage", "depth", "recall (base)", "recall", "held gold", "lost here"]
        base = {s.spec.name: s for s in report.base or ()}
        rows = []
        for s in report.head:
            b = base.get(s.spec.name)
            rows.append([_name(s.spec.name), s.where, "—" if b is None or b.recall is None else f3(b.recall),
                         "—" if s.recall is None else f3(s.recall), f"{s.held} of {s.reported}", str(s.lost)])
        out += ["#### Stages (which stage lost the gold chunk)", table(headers, rows)]
        lines = _losses(report)
        if lines:
            out.append("\n".join(lines))
        if report.lost:
            counts: dict[str, int] = {}
            for q in report.lost:
                counts[q.stage] = counts.get(q.stage, 0) + 1
            by = " · ".join(f"{_name(name)} {n}" for name, n in counts.items())
            shown = report.lost if limit is None else report.lost[:limit]
            ranks = " → ".join(_name(s.name) for s in report.chain)
            out.append(f"**Lost their gold chunk against the base** ({plural(len(report.lost), 'question')}; "
                       f"first stage that lost it: {by})")
            if shown:
                out.append(table(["question", "lost at", f"first gold rank: {ranks}"],
                                 [[code_span(q.id, 40), _name(q.stage), " → ".join(map(_rank, q.ranks))]
                                  for q in shown]))
            if len(shown) < len(report.lost):
                out[-1] += more(len(report.lost) - len(shown), "questions", ctx.full_report)
    if report.calls is not None:
        out.append(_calls_text(report.calls))
    return "\n\n".join(out)
