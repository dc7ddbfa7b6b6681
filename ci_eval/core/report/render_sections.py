"""The comment's sections about the verdict itself: the headline table, the gate (every
rule and its outcome), the run's warnings, and the per-question lists (regressions,
improvements, unchanged)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from ci_eval.core.compare.diff import Diff, QuestionChange
from ci_eval.core.compare.diff_questions import move_text
from ci_eval.core.compare.gate import FAILED, PASSED, GateResult
from ci_eval.core.report.escape import code_span, escape_md, fenced_line
from ci_eval.core.report.markdown import (
    IdsLengths,
    TableLengths,
    details,
    ids,
    metric,
    more,
    question_cell,
    table,
    table_at_least,
)
from ci_eval.core.report.render_context import ReportContext
from ci_eval.core.textfmt import ci_text, f3, p_text, plural, signed, small


def _floor_failures(gate: GateResult) -> dict[str, str]:
    out = {}
    for f in gate.failures:
        if f.rule == "min":
            out[f.subject] = "below floor"
        elif f.rule == "max_drop":
            out.setdefault(f.subject, "fails max_drop")
    return out


def _metric_row(diff: Diff, m, flags: dict[str, str]) -> list[str]:
    t = m.test
    if not diff.has_base:
        return [metric(m.name), "—", f3(m.head_overall), "—", "—",
                "no baseline" + (f" · ❌ {flags[m.name]}" if m.name in flags else "")]
    if m.missing:
        return [metric(m.name), f3(m.base_overall), f3(m.head_overall), "—", "—",
                f"no comparison (not measured on {m.missing})"]
    if t is None or t.n == 0 or diff.no_comparison:
        return [metric(m.name), f3(m.base_overall), f3(m.head_overall), "—", "—",
                "no comparison possible"]
    if not m.moved:
        stat, label = "—", "no change"
    else:
        # the raw interval and p beside the family's corrected verdict
        stat = f"{ci_text(t)} {p_text(t.p_value)}"
        if t.significant:
            label = "▼ significant" if t.delta < 0 else "▲ significant"
        elif t.raw_significant:
            label = "within noise after Holm"
        else:
            label = "within noise"
    if m.name in flags:
        label += f" · ❌ {flags[m.name]}"
    return [metric(m.name), f3(t.base_mean), f3(t.head_mean), signed(t.delta), stat, label]


def family_line(diff: Diff, metrics: int) -> str:
    """Which family each mark belongs to, in one sentence."""
    pairs = sum(1 for t in diff.tags for _, x in t.tests if x.p_value is not None)
    tags = (f"; the tags' ▼/▲ by Holm over the {plural(pairs, 'tag × metric pair')}"
            if pairs else "")
    tied = max((m.test.ties for m in diff.metrics if m.test is not None), default=0)
    noise = (f" The tests count {plural(tied, 'question')} as unchanged: the retriever alone changed "
             f"{'its' if tied == 1 else 'their'} outcome between repeated passes (`--repeat`)." if tied else "")
    return (f"Marks: Holm over the {plural(metrics, 'metric')} (family-wise α=0.05){tags}; "
            f"the CI and p are each metric's own.{noise}")


def headline(ctx: ReportContext) -> str:
    diff = ctx.diff
    flags = _floor_failures(ctx.gate)
    rows = [_metric_row(diff, m, flags) for m in diff.metrics]
    out = [table(["metric", "base", "head", "Δ", "95% CI / p", "verdict"], rows)]
    tested = [m for m in diff.metrics if m.test and m.test.n and not diff.no_comparison]
    if tested:
        n = tested[0].test.n
        mdc = " · ".join(f"{metric(m.name)} {small(m.test.mdc)}" for m in tested)
        out.append(f"<sub>Paired over {plural(n, 'shared question')} (0/1 metrics such as "
                   "hit@k: Tango's score test and interval; the others: the sign-flip test and "
                   f"its inverted interval). {family_line(diff, len(tested))} Smallest change "
                   "this many questions detect (80% power after the correction; it depends on "
                   "how much the per-question differences spread, so it moves from one "
                   f"comparison to the next): {mdc}.</sub>")
    measured = diff.head_measured
    if diff.comparable and measured != len(diff.compared):
        out.append(f"<sub>Base and head are means over the compared questions; head over all "
                   f"{plural(measured, 'measured question')} is "
                   + ", ".join(f"{metric(m.name)} {f3(m.head_overall)}" for m in diff.metrics[:5])
                   + ".</sub>")
    return "\n\n".join(out)


_MARK = {PASSED: "✅", FAILED: "❌"}


def gate_section(ctx: ReportContext, limit: int | None) -> str:
    gate = ctx.gate
    source = ""
    if ctx.gate_path or ctx.gate_source:
        path = code_span(ctx.gate_path, 120, False) if ctx.gate_path else ""
        source = f" (rules from {path}{escape_md(ctx.gate_source, 200)})"
    lines = ["#### Gate: " + ("✅ passed" if gate.passed else "❌ failed") + source]
    for o in gate.outcomes:
        mark = _MARK.get(o.status, "➖")
        status = "" if o.status in _MARK else "not applicable: "
        qs = f" — {ids(o.question_ids, limit, ctx.full_report)}" if o.failed and o.question_ids else ""
        lines.append(f"- {mark} **{o.rule}** {status}{escape_md(o.message, 300)}{qs}")
    for n in gate.notes:
        lines.append(f"- ℹ️ {escape_md(n, 300)}")
    return "\n".join(lines)


def _loss_row(loss, why: str) -> list[str]:
    head = str(loss.head_rank) if loss.head_rank is not None else "—"
    return [code_span(loss.question, 40), code_span(loss.chunk or "?", 60),
            f"{loss.base_rank} → {head}", escape_md(why, 200)]


# The losses the accept command names in the comment; past it, --all from the artefacts.
ACCEPT_SHOWN = 20


def losses_section(ctx: ReportContext, limit: int | None) -> str:
    """The per-question rules' losses: those accepted, with their reason; those excused as
    flapping on the base; acceptances nothing used; and the command that accepts the rest."""
    from ci_eval.core.compare.acceptance import ACCEPT_LABEL, accept_command

    found = ctx.gate.per_question
    if found is None or not (found.excused or found.failing or found.unused):
        return ""
    out = ["#### Per-question losses"]
    header = ["question", "gold chunk", "rank base → head", "why it does not fail"]
    for title, group in ((f"Accepted ({len(found.accepted)})" + (f", from {code_span(found.source, 120, False)}"
                                                                  if found.source else ""), found.accepted),
                         (f"Known to flap on {escape_md(ctx.branch_name, 60)} ({len(found.flapping)})", found.flapping)):
        if group:
            shown = group if limit is None else group[:max(limit, 1)]
            rows = [_loss_row(e.loss, e.why) for e in shown]
            rest = len(group) - len(shown)
            out.append(f"{title}:\n\n" + table(header, rows) + (more(rest, "losses", ctx.full_report) if rest else ""))
    if found.failing:
        n = len(found.failing)
        out.append(f"Not accepted ({n}): if {'this loss is' if n == 1 else 'these losses are'} intended, "
                   f"commit the acceptance (it names each loss, so a different loss later is not covered):\n\n"
                   + fenced_line(accept_command(found.failing, ACCEPT_SHOWN))
                   + (f"\n\n({n - ACCEPT_SHOWN} more: `ci-eval accept --all --base BASE.json --head HEAD.json "
                      "--reason '…'` from the two artefacts)" if n > ACCEPT_SHOWN else "")
                   + f"\n\nor label the pull request `{ACCEPT_LABEL}` to accept every loss of this pull request.")
    if found.unused:
        names = ids([a.question for a in found.unused], limit, ctx.full_report)
        out.append(f"Acceptances that matched no loss here: {names} (the loss each names did not happen "
                   "in this comparison; once merged, `ci-eval check --base` names those to remove).")
    return "\n\n".join(out)


def warnings_section(ctx: ReportContext, limit: int | None) -> str:
    found = ctx.diff.warnings
    if not found:
        return ""
    lines = ["#### Warnings"]
    shown = found if limit is None else found[:max(limit, 1)]
    for w in shown:
        who = f": {plural(len(w.ids), 'question')}, {ids(w.ids, limit, ctx.full_report)}" if w.ids else ""
        lines.append(f"- ⚠️ {escape_md(w.label, 300)}{who}")
    if len(found) > len(shown):
        lines.append(f"- … +{len(found) - len(shown)} more kinds of warning (see {ctx.full_report})")
    return "\n".join(lines)


def _rank_move(q: QuestionChange) -> str:
    def r(x):
        return "—" if x is None else str(x)
    return f"{r(q.base_rank)} → {r(q.head_rank)}"


def _changed_metrics(q: QuestionChange, limit: int = 3) -> str:
    moved = [(m, d) for m, d in q.deltas if abs(d) >= 5e-4]
    text = ", ".join(f"{metric(m)} {signed(d)}" for m, d in moved[:limit])
    return text + (f" (+{len(moved) - limit})" if len(moved) > limit else "")


# A long list repeats the same few summaries and tag lists on every row: escaped once each.
@lru_cache(maxsize=1024)
def _summary_text(summary: str) -> str:
    return escape_md(summary, 120)


@lru_cache(maxsize=1024)
def _tags_text(tags: tuple[str, ...]) -> str:
    return ", ".join(escape_md(t, 30) for t in tags) or "—"


# A chunk id is shown whole up to this many characters: ids such as
# "man1/git-rebase.1#options-interactive-exec" are longer than a question id, and one cut
# mid-id names no chunk a reader can find; the comment's size budget still bounds the list.
CHUNK_ID_CHARS = 120


def explanation(q: QuestionChange) -> str:
    """What happened to one question: the kind in words, the gold chunks that moved, the
    metrics that changed."""
    parts = [_summary_text(q.summary + (f": {q.error}" if q.error else ""))]
    chunks = [move_text(m, q.graded, lambda i: code_span(i, CHUNK_ID_CHARS)) for m in q.moves[:3]]
    if len(q.moves) > 3:
        chunks.append(f"+{len(q.moves) - 3} more")
    if chunks:
        parts.append(", ".join(chunks))
    # for a lost or gained hit the kind says it; otherwise the metrics are the change
    metrics = _changed_metrics(q) if q.kind in ("down", "up", "mixed") else ""
    if metrics:
        parts.append(metrics)
    return "; ".join(p for p in parts if p)


UNJUDGED_MARK = "unjudged, may not be a regression"
FLAPPING_MARK = "flapping across the repeated passes: possibly noise"
LABEL_COMMAND = "ci-eval label --pool"


QUESTION_HEADERS = ["question", "first gold rank", "what happened", "tags"]


def question_table_at_least(questions) -> int:
    """What a section listing every one of ``questions`` is known to reach (core/report/budget.py)."""
    return table_at_least(QUESTION_HEADERS, len(questions))


@lru_cache(maxsize=4096)
def _row(q: QuestionChange, unjudged: bool, flapping: bool = False, note: str = "") -> tuple[str, ...]:
    # the budget renders a list at several lengths: each row is built once
    marks = [mark for mark, on in ((UNJUDGED_MARK, unjudged), (FLAPPING_MARK, flapping)) if on]
    if note:  # it names the base branch, which is the repository's text
        marks.append(escape_md(note, 160))
    return (question_cell(q.id, q.question), _rank_move(q),
            explanation(q) + "".join(f" ({mark})" for mark in marks),
            _tags_text(tuple(q.tags)))


@dataclass(frozen=True)
class RowMarks:
    """What is said beside a question's change besides the change itself: unjudged results
    (``suspects``), flapping across ``--repeat`` passes (``flapping``), and what the base
    branch's recent runs say of it (``note(id)``: core/compare/recent_runs.py)."""

    suspects: frozenset = frozenset()
    flapping: frozenset = frozenset()
    note: Callable[[str], str] = lambda qid: ""

    def row(self, q: QuestionChange) -> tuple[str, ...]:
        return _row(q, q.id in self.suspects, q.id in self.flapping, self.note(q.id))


def question_rows(questions, limit: int | None, marks: RowMarks = RowMarks()) -> tuple[str, int]:
    shown = questions if limit is None else questions[:limit]
    if not shown:
        return "", len(questions)
    rows = [list(marks.row(q)) for q in shown]
    return (table(QUESTION_HEADERS, rows),
            len(questions) - len(shown))


def _regressions_head(ctx: ReportContext) -> str:
    regs, lost = ctx.diff.regressions, ctx.diff.lost
    return (f"#### Regressions ({len(regs)}): {lost} lost at k={ctx.diff.k}, "
            f"{len(regs) - lost} with a metric down")


def _suspects(ctx: ReportContext) -> frozenset:
    return ctx.judged.suspects if ctx.judged else frozenset()


def _regression_marks(ctx: ReportContext) -> RowMarks:
    from ci_eval.core.compare.recent_runs import regression_note

    repeat = ctx.diff.head_info.repeat
    recent, branch = ctx.recent, ctx.branch_name
    return RowMarks(_suspects(ctx), repeat.flapping_ids if repeat else frozenset(),
                    lambda qid: regression_note(recent, qid, branch))


def regressions(ctx: ReportContext, limit: int | None) -> str:
    regs = ctx.diff.regressions
    if not regs:
        return ""
    rows, rest = question_rows(regs, limit, _regression_marks(ctx))
    return _regressions_text(ctx, rows, rest)


def _regressions_text(ctx: ReportContext, rows: str, rest: int) -> str:
    return (_regressions_head(ctx) + ("\n\n" + rows if rows else "")
            + (more(rest, "regressions", ctx.full_report) if rest else ""))


class CountedList:
    """A section that lists questions in a table, at any limit for the budget
    (core/report/budget.py): its length counted from each row's cells (``length``), and its text
    written from the same rows (``render``), so a row the search counted is not built again
    to be written. ``text(rows, rest)`` is the section around a table (``""`` for none) with
    ``rest`` questions not shown; ``full(limit)`` writes it without the budget. Written
    whole once the budget has counted rows (a job summary cut near 1 MiB, packed again
    while its bytes are over), it is written from the rows counted, not built again."""

    def __init__(self, questions, marks: RowMarks, text, full):
        self._questions, self._text, self._full = questions, text, full
        self._rows = TableLengths(QUESTION_HEADERS, (list(marks.row(q)) for q in questions))

    def render(self, limit: int | None) -> str:
        if not self._questions or (limit is None and not self._rows.started):
            return self._full(limit)
        shown = self._rows.first(len(self._questions) if limit is None else limit)
        return self._text(table(QUESTION_HEADERS, shown) if shown else "", len(self._questions) - len(shown))

    def length(self, limit: int, room: int | None = None) -> int | None:
        """``len(render(limit))``, None for a limit it cannot count (the budget renders that
        one); with ``room``, any number over ``room`` when that length is over it."""
        if not self._questions:
            return 0
        shown = min(limit, len(self._questions))
        rest = len(self._questions) - shown
        # The table sits in the text verbatim (it starts and ends with "|"): the text around
        # a one-character table, less that character, is everything but the table.
        around = len(self._text("|", rest)) - 1
        rows = self._rows.length(shown, None if room is None else room - around)
        if rows is None:
            return None
        return around + rows if rows else len(self._text("", rest))


def regressions_list(ctx: ReportContext) -> CountedList:
    return CountedList(ctx.diff.regressions, _regression_marks(ctx),
                       lambda rows, rest: _regressions_text(ctx, rows, rest),
                       lambda limit: regressions(ctx, limit))


def improvements_list(ctx: ReportContext) -> CountedList:
    return CountedList(ctx.diff.improvements, RowMarks(),
                       lambda rows, rest: _improvements_text(ctx, rows, rest),
                       lambda limit: improvements(ctx, limit))


def judged(ctx: ReportContext) -> str:
    """Said only when the head brought chunks nobody judged into the top k: a metric counts
    them as not relevant, so the change may be missing labels rather than regressing."""
    j = ctx.judged
    if j is None or not j.new_unjudged:
        return ""
    base = f" (base {f3(j.base_mean)})" if j.compared else ""
    where = f"the head brought them into the top {j.k}" if j.compared else f"they are in the top {j.k}"
    return (f"#### Unjudged results: judged@{j.k} {f3(j.head_mean)}{base}\n\n"
            f"{plural(j.new_unjudged, 'result')} in {plural(j.questions, 'question')} "
            f"{'was' if j.new_unjudged == 1 else 'were'} never judged: {where}, and a chunk nobody "
            f"judged counts as not relevant. Judge them with {_label_command(ctx)}.")


def _label_command(ctx: ReportContext) -> str:
    """The labelling command on the artefact this report was given; unnamed (the action's
    uploaded run), the artefact is described rather than given a name it may not have."""
    from ci_eval.core.report.escape import code_span

    if ctx.head_path:
        return code_span(f"{LABEL_COMMAND} {ctx.head_path}", 200, False)
    return f"`{LABEL_COMMAND}` on the head's run artefact"


def improvements(ctx: ReportContext, limit: int | None) -> str:
    imps = ctx.diff.improvements
    if not imps:
        return ""
    rows, rest = question_rows(imps, limit)
    return _improvements_text(ctx, rows, rest)


def _improvements_text(ctx: ReportContext, rows: str, rest: int) -> str:
    return details(f"Improvements ({len(ctx.diff.improvements)})",
                   (rows + more(rest, "improvements", ctx.full_report) if rest else rows).strip())


def unchanged(ctx: ReportContext, limit: int | None) -> str:
    same = ctx.diff.unchanged
    if not same:
        return ""
    return _unchanged_text(ctx, ids(same.ids(), limit, ctx.full_report))


def _unchanged_text(ctx: ReportContext, listed: str) -> str:
    return details(f"Unchanged ({len(ctx.diff.unchanged)}: every metric as before)", listed)


class UnchangedList:
    """The unchanged questions' section at any limit for the budget, its length counted
    from each id's span (``length``) and its text written from the same spans (``render``):
    tens of thousands of ids are not listed again at each length the search tries."""

    def __init__(self, ctx: ReportContext):
        self.ctx = ctx
        self._ids = IdsLengths(ctx.diff.unchanged.ids(), ctx.full_report) if ctx.diff.unchanged else None

    def render(self, limit: int | None) -> str:
        if self._ids is None or (limit is None and not self._ids.started):
            return unchanged(self.ctx, limit)  # nothing counted yet: nothing to reuse
        return _unchanged_text(self.ctx, self._ids.text(len(self.ctx.diff.unchanged) if limit is None else limit))

    def length(self, limit: int, room: int | None = None) -> int:
        """``len(render(limit))``; ``room`` is not needed: every id counted is one the list
        written at that limit holds."""
        if self._ids is None:
            return 0
        return len(_unchanged_text(self.ctx, "")) + self._ids.length(limit)
