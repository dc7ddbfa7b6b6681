"""``Diff`` + ``GateResult`` -> the PR comment (markdown) and a JSON report for machines.

The comment answers "did this PR break retrieval, and where?" in its first lines: a hidden
marker (to find and update the one sticky comment), a one-sentence verdict, the baseline it
was measured against, then the headline table. Detail follows in order of importance, and a
character budget trims the least important detail first. ``budget=None`` renders
everything, for the job summary. Every user-controlled string goes through ``escape``.

The parts: ``render_verdict`` (the first lines), ``render_sections`` (headline, gate,
warnings, question lists), ``render_detail`` (matrix, stale, cutoff, gold set, tags, trend,
run details), ``budget`` (the packer), ``render_json``.
"""

from __future__ import annotations

from dataclasses import replace

from ci_eval.core.report import render_detail as detail
from ci_eval.core.report import render_sections as sections
from ci_eval.core.report import render_stages
from ci_eval.core.report.budget import DEFAULT_BUDGET, GITHUB_LIMIT, SUMMARY_LIMIT, Section, pack, pack_cut
from ci_eval.core.report.escape import code_span, escape_md, marker_suffix
from ci_eval.core.report.render_context import BaselineInfo, ReportContext
from ci_eval.core.report.render_detail import sparkline
from ci_eval.core.report.render_json import render_json, report_dict
from ci_eval.core.report.render_verdict import baseline_line, changed_line, verdict

__all__ = ["DEFAULT_BUDGET", "GITHUB_LIMIT", "MARKER", "BaselineInfo", "ReportContext", "marker",
           "render_json", "render_markdown", "render_summary", "report_dict", "sparkline", "verdict"]

MARKER = "<!-- ci-eval:report -->"


def marker(suffix: str | None = None) -> str:
    """The hidden first line. A suffix (e.g. the gold set's name) gives each gold set its
    own sticky comment; it is reduced to characters that cannot close the HTML comment."""
    s = marker_suffix(suffix) if suffix else ""
    return f"<!-- ci-eval:report:{s} -->" if s else MARKER


def _sections(ctx: ReportContext) -> list[Section]:
    diff = ctx.diff
    st, g = diff.stale, diff.goldset
    listed, improved = sections.regressions_list(ctx), sections.improvements_list(ctx)
    same = sections.UnchangedList(ctx)
    return [
        Section("gate", lambda n: sections.gate_section(ctx, n),
                max((len(f.question_ids) for f in ctx.gate.failures), default=0), 5),
        Section("losses", lambda n: sections.losses_section(ctx, n), _losses_count(ctx), 10),
        Section("warnings", lambda n: sections.warnings_section(ctx, n),
                max((len(w.ids) for w in diff.warnings), default=0), 3),
        Section("regressions", listed.render, len(diff.regressions), 10,
                at_least=sections.question_table_at_least(diff.regressions), measure=listed.length),
        Section("judged", lambda n: sections.judged(ctx), 1),
        Section("stages", lambda n: render_stages.stages(ctx, n), len(diff.stages.lost), 5),
        Section("matrix", lambda n: detail.matrix(ctx, n),
                len(diff.matrix.transitions) + len(diff.matrix.own_knowledge), 5),
        Section("stale", lambda n: detail.stale(ctx, n), len(st.head) + len(st.resolved), 10),
        Section("cutoff", lambda n: detail.cutoff(ctx, n, with_histogram=n is None or n > 0),
                len(diff.cutoff.head.false_answers) + 1, 1),
        Section("goldset", lambda n: detail.goldset(ctx, n),
                len(g.added) + len(g.removed) + len(g.relabelled), 10),
        Section("tags", lambda n: detail.tags(ctx, n), max(len(diff.tags), 1), 10),
        Section("trend", lambda n: detail.trend(ctx) if n is None or n > 0 else "", 1),
        Section("improvements", improved.render, len(diff.improvements),
                at_least=sections.question_table_at_least(diff.improvements), measure=improved.length),
        Section("unchanged", same.render, len(diff.unchanged), measure=same.length),
        Section("details", lambda n: detail.run_details(ctx, n), len(diff.config)),
    ]


def _losses_count(ctx: ReportContext) -> int:
    found = ctx.gate.per_question
    return 0 if found is None else max(len(found.accepted), len(found.flapping), 1)


# Cut first: the least important detail.
_DROP_ORDER = ("unchanged", "details", "improvements", "trend", "tags", "goldset", "cutoff",
               "stale", "judged", "stages", "matrix", "warnings", "losses", "gate", "regressions")


def _head(ctx: ReportContext) -> str:
    lines = [marker(ctx.marker_suffix), f"### {verdict(ctx)}", baseline_line(ctx)]
    changed = changed_line(ctx.diff)
    title = f"Gold set: {escape_md(ctx.title, 80)}" if ctx.title else ""
    tail = [x for x in (changed, title) if x]
    text = "\n".join(lines)
    if tail:
        text += " \\\n" + " \\\n".join(tail)
    return text + "\n\n" + sections.headline(ctx)


def render_markdown(ctx: ReportContext, budget: int | None = DEFAULT_BUDGET) -> str:
    """The PR comment. Under ``budget`` characters (hard-capped below GitHub's 65,536)
    whatever the size of the diff; ``None`` renders everything (the full report)."""
    return pack(_head(ctx), _sections(ctx), _DROP_ORDER, budget)


# A cut over in bytes is made again this many times before its bytes are cut directly.
_SUMMARY_TRIES = 4


def render_summary(ctx: ReportContext, artifact: str, limit: int = SUMMARY_LIMIT) -> str:
    """The job summary: the full report when its UTF-8 bytes fit in ``limit`` (GitHub's
    limit for one step's summary), else cut as the comment is, least important detail
    first, with each cut list and a closing line naming the full report in the workflow
    artifact ``artifact``. The packer counts characters, so a cut that is still over in
    bytes (text outside ASCII) is made again with a budget scaled by how far over it was."""
    where = f"summary.md in this run's {code_span(artifact, 100, False)} artifact"
    ctx = replace(ctx, full_report=where)
    note = (f"\n\n… this summary is cut to GitHub's limit of {limit:,} bytes for one step; "
            f"{where} holds the whole report.\n")
    room = limit - len(note.encode("utf-8"))  # for the report above the note
    budget = room
    head, sections = _head(ctx), _sections(ctx)  # a section's counted rows serve every try
    for _ in range(_SUMMARY_TRIES):
        text, cut = pack_cut(head, sections, _DROP_ORDER, budget, note)
        if not cut and len(text.encode("utf-8")) <= limit:
            return text
        body = text[: -len(note)] if cut and text.endswith(note) else text.rstrip("\n")
        size = len(body.encode("utf-8"))
        if cut and size <= room:
            return body + note
        budget = max(len(body) * room // size - 1, 0)  # the bytes a character took here
    # Still over after those tries: only far outside ASCII. Cut the bytes at a line end,
    # which is always a character boundary in UTF-8.
    raw = body.encode("utf-8")
    return raw[: max(raw.rfind(b"\n", 0, room), 0)].decode("utf-8") + note
