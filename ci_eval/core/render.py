"""``Diff`` + ``GateResult`` -> the PR comment (markdown) and a JSON report for machines.

The comment answers "did this PR break retrieval, and where?" in its first lines: a hidden
marker (to find and update the one sticky comment), a one-sentence verdict, the baseline it
was measured against, then the headline table. Detail follows in order of importance, and a
character budget (GitHub refuses comments over 65,536 characters) trims the least important
detail first, each cut list ending with a "+N more" line. ``budget=None`` renders everything,
for the job summary. Every user-controlled string goes through ``escape``.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from tabulate import tabulate

from ci_eval.core.cutoff import NO_GAP, CutoffSide, histogram
from ci_eval.core.diff import Diff, MetricChange, QuestionChange
from ci_eval.core.escape import code_span, escape_md, marker_suffix
from ci_eval.core.gate import GateResult
from ci_eval.core.judged import JudgedReport
from ci_eval.core.matrix import CELL_LABELS, CELLS

MARKER = "<!-- ci-eval:report -->"
DEFAULT_BUDGET = 65_000
GITHUB_LIMIT = 65_536
SPARKS = "▁▂▃▄▅▆▇█"
_TRUNCATED = "\n\n… report truncated to fit a comment; the job summary has all of it.\n"


def marker(suffix: str | None = None) -> str:
    """The hidden first line. A suffix (e.g. the gold set's name) gives each gold set its
    own sticky comment; it is reduced to characters that cannot close the HTML comment."""
    s = marker_suffix(suffix) if suffix else ""
    return f"<!-- ci-eval:report:{s} -->" if s else MARKER


@dataclass(frozen=True)
class BaselineInfo:
    """Where the base artefact came from, as the caller found it.

    ``kind``: ``exact`` (the PR's base commit), ``fallback`` (another run of the base
    branch), ``builtin`` (the demo's own baseline), ``file`` (an artefact given on the
    command line) or ``none``. ``description`` is the caller's sentence (it names the commit,
    its age and why); without it the line is built from ``sha``, ``age`` and ``reason``.
    ``url`` links the run the baseline came from (https only).
    """

    kind: str = "file"
    description: str | None = None
    url: str | None = None
    sha: str | None = None
    age: str | None = None  # "2 days old"
    reason: str | None = None  # "base commit abc1234 was never evaluated"

    def as_dict(self) -> dict:
        return {"kind": self.kind, "description": self.description, "url": self.url,
                "sha": self.sha, "age": self.age, "reason": self.reason}


@dataclass(frozen=True)
class ReportContext:
    diff: Diff
    gate: GateResult
    baseline: BaselineInfo
    marker_suffix: str = ""
    title: str = ""  # optional: the gold set's name, shown after the verdict
    judged: JudgedReport | None = None  # judged@k and the unjudged results the head brought
    remap: dict | None = None  # the head artefact's index.remap: what `ci-eval gold remap` would do


# --------------------------------------------------------------------------- formatting


def _f(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _d(x: float | None) -> str:
    if x is None:
        return "—"
    if abs(x) < 5e-4:
        return "0.000"
    return f"{x:+.3f}"


def _p(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _ids(ids, limit: int | None = None) -> str:
    ids = list(ids)
    shown = ids if limit is None else ids[:limit]
    if not shown and ids:
        return f"{_plural(len(ids), 'question')} (listed in the job summary)"
    text = ", ".join(code_span(i, 60, in_table=False) for i in shown)
    if len(ids) > len(shown):
        text += f" (+{len(ids) - len(shown)} more)"
    return text


def _short_sha(sha: str | None) -> str:
    return code_span((sha or "")[:7] or "?", 12, in_table=False)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    # tabulate pads by display width when the optional wcwidth package happens to be
    # installed and by code points otherwise; the comment must not depend on which (the
    # same inputs give the same bytes everywhere), so pin it to code points.
    import tabulate as _tabulate_module

    wide = _tabulate_module.WIDE_CHARS_MODE
    _tabulate_module.WIDE_CHARS_MODE = False
    try:
        return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
    finally:
        _tabulate_module.WIDE_CHARS_MODE = wide


def _question_cell(qid: str, text: str, limit: int = 80) -> str:
    return f"{code_span(qid, 40)} {escape_md(text, limit)}"


def _more(n: int, what: str) -> str:
    return f"\n\n… +{n} more {what} (see the job summary or the JSON report)"


# --------------------------------------------------------------------------- verdict


def _headline_metric(diff: Diff) -> MetricChange | None:
    preferred = [f"hit@{diff.k}", "mrr", f"recall@{diff.k}", f"ndcg@{diff.k}"]
    for name in preferred + [m.name for m in diff.metrics]:
        m = diff.metric(name)
        if m is not None and m.head_overall is not None:
            return m
    return None


def _stat(m: MetricChange) -> str:
    t = m.test
    if t is None:
        return ""
    if t.p_value is not None:
        return _p(t.p_value)
    return f"95% CI [{t.ci_low:+.3f}, {t.ci_high:+.3f}]"


def _where(diff: Diff, questions: tuple[QuestionChange, ...]) -> str:
    tags = Counter(t for q in questions for t in set(q.tags))
    if len(questions) <= 3:
        return ": " + ", ".join(
            code_span(q.id, 40, in_table=False)
            + (f" ({', '.join(escape_md(t, 30) for t in q.tags[:2])})" if q.tags else "")
            for q in questions)
    if tags:
        top = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        return "; by tag: " + ", ".join(f"{escape_md(t, 30)} {n}" for t, n in top)
    return ": " + _ids((q.id for q in questions), 3)


def _lost(diff: Diff) -> tuple[QuestionChange, ...]:
    return tuple(q for q in diff.regressions if q.kind in ("lost", "error"))


def _lost_clause(diff: Diff) -> str:
    lost = _lost(diff)
    if not lost:
        return ""
    return (f"; {_plural(len(lost), 'question')} lost {'its' if len(lost) == 1 else 'their'} "
            f"gold chunk at k={diff.k}{_where(diff, lost)}")


def _moved(m: MetricChange, verb: str) -> str:
    label = "significant" if m.test and m.test.significant else "within noise"
    stat = _stat(m)
    return f"{m.name} {verb} {_f(m.base)} → {_f(m.head)} ({label}{', ' + stat if stat else ''})"


def _aside(diff: Diff) -> str:
    """What a passing verdict must not hide: stale gold, gold-set edits, a lost cutoff gap."""
    parts = []
    if diff.stale.new:
        drift = (f" after the index changed to {code_span(diff.head_info.index_version, 40, False)}"
                 if diff.index_changed and diff.head_info.index_version else "")
        parts.append(f"{_plural(len(diff.stale.new), 'question')} now "
                     f"{'has' if len(diff.stale.new) == 1 else 'have'} stale gold{drift} "
                     "(kept out, not a regression)")
    g = diff.goldset
    if g.any:
        parts.append(f"the gold set changed ({len(g.added)} added, {len(g.removed)} removed, "
                     f"{len(g.relabelled)} relabelled; compared on the rest)")
    base, head = diff.cutoff.base, diff.cutoff.head
    if head.checkable and not head.has_gap and (base is None or base.has_gap):
        parts.append("answerable and unanswerable top scores "
                     + ("now overlap" if base is not None else "overlap")
                     + ": no cutoff separates them")
    return "".join(f"; {p}" for p in parts)


def verdict(ctx: ReportContext) -> str:
    """One sentence: pass or fail, and why."""
    diff, gate = ctx.diff, ctx.gate
    failures = gate.failures
    extra = len(failures) - 1
    more = f" (+{_plural(extra, 'more failed rule')})" if extra > 0 else ""
    if failures:
        f = failures[0]
        prefer = {f"hit@{diff.k}": 0, "mrr": 1}
        by_rule: dict = {}
        for x in sorted(failures, key=lambda x: prefer.get(x.subject, 2)):
            by_rule.setdefault(x.rule, x)
        if "errors" in by_rule:
            f = by_rule["errors"]
            return (f"❌ The retriever failed on {_plural(len(f.question_ids), 'question')} "
                    f"(fail closed): {_ids(f.question_ids, 3)}{more}.")
        if "max_drop" in by_rule:
            m = diff.metric(by_rule["max_drop"].subject)
            return f"❌ Retrieval regressed: {_moved(m, 'fell')}{_lost_clause(diff)}{more}."
        if "min" in by_rule:
            f = by_rule["min"]
            m = diff.metric(f.subject)
            if m is None or m.head_overall is None:
                return f"❌ {escape_md(f.message, 200)}{more}."
            return (f"❌ Below the floor: {m.name} is {_f(m.head_overall)} "
                    f"(floor {_f(f.threshold)})"
                    f"{_lost_clause(diff)}{more}.")
        if "protected" in by_rule:
            ids = by_rule["protected"].question_ids
            return (f"❌ {_plural(len(ids), 'protected question')} not a hit at k={diff.k}: "
                    f"{_ids(ids, 3)}{_lost_clause(diff)}{more}.")
        return f"❌ {escape_md(f.message, 300)}{more}."
    if not diff.has_base:
        m = _headline_metric(diff)
        head = f"{m.name} {_f(m.head_overall)}" if m else "no metrics"
        return (f"✅ No baseline to compare against, so nothing was compared; this run alone: "
                f"{head}, and the floors pass{_aside(diff)}.")
    downs = [m for m in diff.metrics if m.test and m.test.significant and m.test.delta < 0]
    ups = [m for m in diff.metrics if m.test and m.test.significant and m.test.delta > 0]
    prefer = {f"hit@{diff.k}": 0, "mrr": 1}
    downs.sort(key=lambda m: prefer.get(m.name, 2))
    ups.sort(key=lambda m: prefer.get(m.name, 2))
    if downs:
        return (f"⚠️ Gate passed, but retrieval regressed: {_moved(downs[0], 'fell')}"
                f"{_lost_clause(diff)}{_aside(diff)}.")
    if ups:
        gained = [q for q in diff.improvements if q.kind == "gained"]
        tail = (f"; {_plural(len(gained), 'question')} found "
                f"{'its' if len(gained) == 1 else 'their'} gold chunk again at k={diff.k}"
                if gained else "")
        return f"✅ Retrieval improved: {_moved(ups[0], 'rose')}{tail}{_aside(diff)}."
    moved = [q for q in diff.questions if q.kind != "same"]
    m = _headline_metric(diff)
    if not moved:
        n = len(diff.compared)
        what = f" ({m.name} {_f(m.head)})" if m and m.head is not None else ""
        return (f"✅ No change: all {_plural(n, 'compared question')} rank their gold as "
                f"before{what}{_aside(diff)}.")
    lost = len(_lost(diff))
    gained = sum(1 for q in diff.improvements if q.kind == "gained")
    mm = m if m and m.test else None
    head = f"{_moved(mm, 'moved')}; " if mm and mm.delta else ""
    return (f"✅ No significant change: {head}{lost} lost and {gained} gained "
            f"their gold chunk at k={diff.k}, {_plural(len(moved), 'question')} moved"
            f"{_aside(diff)}.")


# --------------------------------------------------------------------------- sections


_SAFE_URL = re.compile(r"https://[A-Za-z0-9.-]+/[A-Za-z0-9._~/%?=&+-]*")


def _run_link(url: str | None) -> str:
    if not url or not _SAFE_URL.fullmatch(url) or len(url) > 300:
        return ""
    return f" ([run]({url.replace('&', '&amp;')}))"


def _describe(text: str) -> str:
    """The caller's sentence without its own "baseline:" lead-in (the line has one)."""
    text = re.sub(r"^\s*(no |fallback )?baseline:\s*", lambda m: "fallback: "
                  if (m.group(1) or "").strip() == "fallback" else "", text)
    return escape_md(text, 240)


def _baseline_line(ctx: ReportContext) -> str:
    b, diff = ctx.baseline, ctx.diff
    link = _run_link(b.url)
    if not diff.has_base or b.kind == "none":
        why = _describe(b.description or b.reason or "no base artefact")
        return (f"**Baseline:** none: {why}{link}. Nothing to compare against; only floors "
                "and errors were checked.")
    bi = diff.base_info
    if b.description:
        what = _describe(b.description)
    else:
        sha = b.sha or bi.sha
        age = f", {escape_md(b.age, 40)}" if b.age else ""
        why = f" ({escape_md(b.reason, 160)})" if b.reason else ""
        what = {
            "exact": f"the PR's base commit {_short_sha(sha)}{age}",
            "fallback": f"fallback {_short_sha(sha)}{age}{why}",
        }.get(b.kind, f"artefact of {_short_sha(sha)}{age}{why}")
    hv, bv = diff.head_info.index_version, bi.index_version
    if bv != hv:
        index = (f"index {code_span(bv or 'unversioned', 40, False)} → "
                 f"{code_span(hv or 'unversioned', 40, False)}")
    else:
        index = f"index {code_span(hv or 'unversioned', 40, False)}"
    return (f"**Baseline:** {what}{link}; {index}; "
            f"{_plural(len(diff.compared), 'question')} compared.")


def _changed_line(diff: Diff, limit: int = 3) -> str:
    if not diff.config:
        return ""
    parts = [f"{code_span(c.path, 60, False)} {code_span(c.base, 40, False)} → "
             f"{code_span(c.head, 40, False)}" for c in diff.config[:limit]]
    more = f" (+{len(diff.config) - limit} more)" if len(diff.config) > limit else ""
    return "**Changed:** " + "; ".join(parts) + more


def _floor_failures(gate: GateResult) -> dict[str, str]:
    out = {}
    for f in gate.failures:
        if f.rule == "min":
            out[f.subject] = "below floor"
        elif f.rule == "max_drop":
            out.setdefault(f.subject, "fails max_drop")
    return out


def _headline(ctx: ReportContext) -> str:
    diff = ctx.diff
    flags = _floor_failures(ctx.gate)
    rows = []
    for m in diff.metrics:
        t = m.test
        if not diff.has_base:
            verdict_cell = "no baseline"
            rows.append([m.name, "—", _f(m.head_overall), "—", "—",
                         verdict_cell + (f" · ❌ {flags[m.name]}" if m.name in flags else "")])
            continue
        if m.missing:
            rows.append([m.name, _f(m.base_overall), _f(m.head_overall), "—", "—",
                         f"no comparison (not measured on {m.missing})"])
            continue
        if t is None or t.n == 0:
            rows.append([m.name, "—", _f(m.head_overall), "—", "—", "no compared questions"])
            continue
        if t.lost == 0 and t.gained == 0:
            stat, label = "—", "no change"
        else:
            ci = f"[{t.ci_low:+.3f}, {t.ci_high:+.3f}]"
            stat = f"{ci} {_p(t.p_value)}" if t.p_value is not None else ci
            if t.significant:
                label = "▼ significant" if t.delta < 0 else "▲ significant"
            else:
                label = "within noise"
        if m.name in flags:
            label += f" · ❌ {flags[m.name]}"
        rows.append([m.name, _f(t.base_mean), _f(t.head_mean), _d(t.delta), stat, label])
    out = [_table(["metric", "base", "head", "Δ", "95% CI / p", "verdict"], rows)]
    tested = [m for m in diff.metrics if m.test and m.test.n]
    if tested:
        n = tested[0].test.n
        mdc = " · ".join(f"{m.name} {_f(m.test.mdc)}" for m in tested)
        out.append(f"<sub>Paired over {_plural(n, 'shared question')} (bootstrap 95% CI, "
                   f"exact McNemar for hit@k). Smallest change this many questions can detect "
                   f"(80% power, α=0.05): {mdc}.</sub>")
    measured = sum(1 for q in diff.head_questions if q.measured)
    if diff.has_base and measured != len(diff.compared):
        out.append(f"<sub>Base and head are means over the compared questions; head over all "
                   f"{_plural(measured, 'measured question')} is "
                   + ", ".join(f"{m.name} {_f(m.head_overall)}" for m in diff.metrics[:5])
                   + ".</sub>")
    return "\n\n".join(out)


def _gate_section(ctx: ReportContext, limit: int | None) -> str:
    gate = ctx.gate
    lines = ["#### Gate: " + ("✅ passed" if gate.passed else "❌ failed")]
    for f in gate.failures:
        ids = f" — {_ids(f.question_ids, limit)}" if f.question_ids else ""
        lines.append(f"- ❌ **{f.rule}** {escape_md(f.message, 300)}{ids}")
    for n in gate.notes:
        lines.append(f"- ℹ️ {escape_md(n, 300)}")
    return "\n".join(lines)


def _rank_move(q: QuestionChange) -> str:
    def r(x):
        return "—" if x is None else str(x)
    return f"{r(q.base_rank)} → {r(q.head_rank)}"


def _question_rows(questions, limit: int | None, suspects: frozenset = frozenset()) -> tuple[str, int]:
    shown = questions if limit is None else questions[:limit]
    if not shown:
        return "", len(questions)
    rows = [[_question_cell(q.id, q.question), _rank_move(q),
             escape_md(q.detail, 120) + (f" ({UNJUDGED_MARK})" if q.id in suspects else ""),
             ", ".join(escape_md(t, 30) for t in q.tags) or "—"] for q in shown]
    return _table(["question", "gold rank", "what happened", "tags"], rows), \
        len(questions) - len(shown)


def _regressions(ctx: ReportContext, limit: int | None) -> str:
    regs = ctx.diff.regressions
    if not regs:
        return ""
    k = ctx.diff.k
    lost = sum(1 for q in regs if q.kind in ("lost", "error"))
    head = (f"#### Regressions ({len(regs)}): {lost} lost at k={k}, "
            f"{len(regs) - lost} moved down")
    table, rest = _question_rows(regs, limit, ctx.judged.suspects if ctx.judged else frozenset())
    return (head + ("\n\n" + table if table else "")
            + (_more(rest, "regressions") if rest else ""))


UNJUDGED_MARK = "unjudged, may not be a regression"
LABEL_COMMAND = "ci-eval label --pool head.json"


def _judged(ctx: ReportContext) -> str:
    """Said only when the head brought chunks nobody judged into the top k: a metric counts
    them as not relevant, so the change may be missing labels rather than regressing."""
    j = ctx.judged
    if j is None or not j.new_unjudged:
        return ""
    base = f" (base {_f(j.base_mean)})" if j.compared else ""
    where = f"the head brought them into the top {j.k}" if j.compared else f"they are in the top {j.k}"
    return (f"#### Unjudged results: judged@{j.k} {_f(j.head_mean)}{base}\n\n"
            f"{_plural(j.new_unjudged, 'result')} in {_plural(j.questions, 'question')} "
            f"{'was' if j.new_unjudged == 1 else 'were'} never judged: {where}, and a chunk nobody "
            f"judged counts as not relevant. Judge them with `{LABEL_COMMAND}`.")


def _matrix(ctx: ReportContext, limit: int | None) -> str:
    mx = ctx.diff.matrix
    if not mx.available:
        return f"#### Failure matrix\n\n{mx.hint}"
    rows = []
    for cell in CELLS:
        base = str(mx.base.count(cell)) if mx.base else "—"
        rows.append([CELL_LABELS[cell], base, str(mx.head.count(cell))])
    out = ["#### Failure matrix (gold retrieved at k × answer correct)",
           _table(["cell", "base", "head"], rows)]
    largest = mx.head.largest
    if largest:
        stage = {"retrieved_wrong": "generation (prompt, chunk count and order, model)",
                 "missed_wrong": "retrieval (chunking, embeddings, hybrid search)",
                 "missed_correct": "the corpus: answers come from the model's own knowledge"}
        out.append(f"Largest failure cell: **{CELL_LABELS[largest]}**; next effort goes to "
                   f"{stage[largest]}.")
    lines = []
    for kind, label in (("retrieval_regression", "Retrieval regressions (retrieved → missed)"),
                        ("generation_regression",
                         "Generation regressions (correct → wrong, still retrieved)"),
                        ("retrieval_fix", "Retrieval fixes (missed → retrieved)"),
                        ("generation_fix", "Generation fixes (wrong → correct)")):
        moved = mx.of_kind(kind)
        if moved:
            lines.append(f"- {label}: {_ids((t.id for t in moved), limit)}")
    if mx.own_knowledge:
        lines.append(f"- Answered from the model's own knowledge (not retrieved, correct): "
                     f"{_ids(mx.own_knowledge, limit)}")
    if mx.head.unknown:
        lines.append(f"- {_plural(mx.head.unknown, 'measured question')} without an answer "
                     "verdict")
    if lines:
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _stale(ctx: ReportContext, limit: int | None) -> str:
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
        out.append(f"{_plural(len(st.head), 'question')} point at "
                   f"{_plural(st.head_ids, 'gold id')} missing from index {hv}: stale labels, "
                   f"not a regression. They are kept out of the comparison and of regression "
                   f"rules (only `max_stale` counts them).{drift} Re-validate the gold set.")
        shown = st.head if limit is None else st.head[:limit]
        new = {q.id for q in st.new}
        rows = [[_question_cell(q.id, q.question, 60),
                 ", ".join(code_span(i, 50) for i in q.ids[:5])
                 + (f" +{len(q.ids) - 5}" if len(q.ids) > 5 else ""),
                 ("new, " if q.id in new else "") + q.status]
                for q in shown]
        out.append(_table(["question", "missing gold ids", "status"], rows))
        if len(st.head) > len(shown):
            out[-1] += _more(len(st.head) - len(shown), "stale questions")
        from ci_eval.core.remap import remap_hint

        hint = remap_hint(ctx.remap)
        if hint:
            out.append(hint)
    if st.resolved:
        out.append(f"Resolved since the base: {_ids((q.id for q in st.resolved), limit)}")
    return "\n\n".join(out)


def _cutoff_row(label: str, side: CutoffSide) -> list[str]:
    gap = side.gap
    if not side.checkable:
        gap_text, suggested = "—", "—"
    elif side.has_gap and gap is None:
        gap_text, suggested = "every unanswerable returned nothing", "—"
    elif gap is None:
        lo_n, hi_n = side.overlap
        gap_text, suggested = f"none ({lo_n} + {hi_n} overlap)", "—"
    else:
        gap_text, suggested = f"{gap[0]:.3g} … {gap[1]:.3g}", f"{side.suggested:.3g}"
    cut = "—" if side.cutoff is None else f"{side.cutoff:.3g}"
    fnf = "—" if side.cutoff is None else f"{len(side.false_not_found)}/{len(side.answerable)}"
    fa = "—" if side.cutoff is None else f"{len(side.false_answers)}/{len(side.unanswerable)}"
    return [label, cut, fnf, fa, gap_text, suggested]


def _cutoff(ctx: ReportContext, limit: int | None, with_histogram: bool = True) -> str:
    c = ctx.diff.cutoff
    head = c.head
    if not head.unanswerable:
        return ("#### Unanswerable questions and the cutoff\n\nNo unanswerable questions in "
                "the gold set, so the \"I could not find this\" cutoff cannot be checked. Add "
                "a few questions with no gold ids, marked unanswerable.")
    out = ["#### Unanswerable questions and the cutoff"]
    if head.checkable and not head.has_gap:
        lo_n, hi_n = head.overlap
        out.append(f"**{NO_GAP[0].upper() + NO_GAP[1:]}.** {_plural(lo_n, 'answerable question')}"
                   f" score at or below the best-scoring unanswerable one, and "
                   f"{_plural(hi_n, 'unanswerable question')} at or above the worst-scoring "
                   "answerable one: no cutoff separates them.")
    elif head.gap is not None:
        out.append(f"Answerable and unanswerable top scores are separated: the gap runs from "
                   f"{head.gap[0]:.3g} to {head.gap[1]:.3g}; its midpoint "
                   f"**{head.suggested:.3g}** is the cutoff it suggests.")
    rows = []
    if c.base is not None:
        rows.append(_cutoff_row("base", c.base))
    rows.append(_cutoff_row("head", head))
    out.append(_table(["run", "cutoff", 'false "not found"', "false answers", "gap",
                       "suggested"], rows))
    fa = head.false_answers
    if fa:
        out.append(f"Answered although unanswerable (top score ≥ cutoff): {_ids(fa, limit)}")
    if with_histogram:
        out.append("```text\n" + histogram(head) + "\n```")
    return "\n\n".join(out)


def _goldset(ctx: ReportContext, limit: int | None) -> str:
    g = ctx.diff.goldset
    if not g.any:
        return ""
    sha = ""
    if g.base_sha256 and g.head_sha256 and g.base_sha256 != g.head_sha256:
        sha = f" (sha256 {_short_sha(g.base_sha256)} → {_short_sha(g.head_sha256)})"
    out = [f"#### Gold set changed in this PR{sha}",
           (f"{len(g.added)} added, {len(g.removed)} removed, {len(g.relabelled)} relabelled; "
            f"the comparison uses only the {_plural(len(ctx.diff.compared), 'question')} "
            "both sides share with the same labels.")]
    rows = []
    for what, refs in (("added", g.added), ("removed", g.removed),
                       ("relabelled", g.relabelled)):
        for r in refs:
            rows.append([_question_cell(r.id, r.question, 70),
                         what + (f": {escape_md(r.note, 40)}" if r.note else "")])
    shown = rows if limit is None else rows[:limit]
    out.append(_table(["question", "change"], shown))
    if len(rows) > len(shown):
        out[-1] += _more(len(rows) - len(shown), "gold-set changes")
    return "\n\n".join(out)


def _tags(ctx: ReportContext, limit: int | None) -> str:
    diff = ctx.diff
    names = [n for n in (f"hit@{diff.k}", "mrr") if diff.metric(n) is not None]
    if not names:
        names = [m.name for m in diff.metrics[:2]]
    if diff.has_base and diff.tags:
        tags = sorted(diff.tags, key=lambda t: (t.delta(names[0]) or 0.0, t.tag))
        rows = []
        for t in tags:
            cells = [escape_md(t.tag, 40), str(t.n)]
            for n in names:
                vals = {m: (b, h) for m, b, h in t.metrics}
                if n in vals:
                    b, h = vals[n]
                    cells.append(f"{_f(b)} → {_f(h)} ({_d(h - b)})")
                else:
                    cells.append("—")
            rows.append(cells)
        headers = ["tag", "n"] + names
    else:
        by_tag: dict[str, list] = {}
        for q in diff.head_questions:
            if q.measured:
                for t in set(q.tags):
                    by_tag.setdefault(t, []).append(q)
        if not by_tag:
            return ""
        rows = [[escape_md(t, 40), str(len(qs))]
                + [_f(sum(q.value(n) for q in qs) / len(qs)) for n in names]
                for t, qs in sorted(by_tag.items())]
        headers = ["tag", "n"] + names
    shown = rows if limit is None else rows[:limit]
    text = "#### By tag (worst first)\n\n" if diff.has_base else "#### By tag\n\n"
    text += _table(headers, shown)
    if len(rows) > len(shown):
        text += _more(len(rows) - len(shown), "tags")
    return text


def sparkline(values: list[float]) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        return SPARKS[3] * len(values)
    return "".join(SPARKS[min(int((v - lo) / (hi - lo) * 7 + 0.5), 7)] for v in values)


def _trend(ctx: ReportContext) -> str:
    diff = ctx.diff
    if not diff.history:
        return ""
    m = _headline_metric(diff)
    if m is None:
        return ""
    values = [dict(means)[m.name] for _, _, means in diff.history[-19:]
              if m.name in dict(means)]
    if m.head_overall is not None:
        values.append(m.head_overall)
    if len(values) < 2:
        return ""
    return (f"**Trend** {m.name} over the last {len(values)} runs (this one last): "
            f"{sparkline(values)} {_f(values[0])} → {_f(values[-1])}")


def _details(title: str, body: str) -> str:
    return f"<details><summary>{title}</summary>\n\n{body}\n\n</details>"


def _improvements(ctx: ReportContext, limit: int | None) -> str:
    imps = ctx.diff.improvements
    if not imps:
        return ""
    table, rest = _question_rows(imps, limit)
    return _details(f"Improvements ({len(imps)})",
                    (table + _more(rest, "improvements") if rest else table).strip())


def _unchanged(ctx: ReportContext, limit: int | None) -> str:
    same = ctx.diff.unchanged
    if not same:
        return ""
    return _details(f"Unchanged ({len(same)})", _ids((q.id for q in same), limit))


def _run_details(ctx: ReportContext, limit: int | None) -> str:
    diff = ctx.diff
    lines = []
    if diff.config:
        shown = diff.config if limit is None else diff.config[:limit]
        rows = [[code_span(c.path, 80), code_span(c.base, 60), code_span(c.head, 60)]
                for c in shown]
        lines.append(_table(["config", "base", "head"], rows)
                     + (_more(len(diff.config) - len(shown), "config changes")
                        if len(diff.config) > len(shown) else ""))
    if diff.latency:
        lines.append("Latency (ms): " + ", ".join(
            f"{stat} {_ms(b)} → {_ms(h)}" if diff.has_base else f"{stat} {_ms(h)}"
            for stat, b, h in diff.latency))
    hi = diff.head_info
    head = _short_sha(hi.sha) if hi.sha else "(no git sha)"
    lines.append(f"Head {head}, k={hi.k}, {_plural(hi.questions, 'question')}, "
                 f"gold set sha256 {_short_sha(hi.gold_sha256)}.")
    return _details("Run details", "\n\n".join(lines))


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


# --------------------------------------------------------------------------- assembly


@dataclass
class _Section:
    key: str
    render: Callable[[int | None], str]
    size: int  # items, for the budget's limit search
    floor: int = 0  # the budget never cuts below this many items
    text: str = ""


def _sections(ctx: ReportContext) -> list[_Section]:
    diff = ctx.diff
    st = diff.stale
    g = diff.goldset
    return [
        _Section("gate", lambda n: _gate_section(ctx, n),
                 max((len(f.question_ids) for f in ctx.gate.failures), default=0), 5),
        _Section("regressions", lambda n: _regressions(ctx, n), len(diff.regressions), 10),
        _Section("judged", lambda n: _judged(ctx), 1),
        _Section("matrix", lambda n: _matrix(ctx, n),
                 len(diff.matrix.transitions) + len(diff.matrix.own_knowledge), 5),
        _Section("stale", lambda n: _stale(ctx, n), len(st.head) + len(st.resolved), 10),
        _Section("cutoff", lambda n: _cutoff(ctx, n, with_histogram=n is None or n > 0),
                 len(diff.cutoff.head.false_answers) + 1, 1),
        _Section("goldset", lambda n: _goldset(ctx, n),
                 len(g.added) + len(g.removed) + len(g.relabelled), 10),
        _Section("tags", lambda n: _tags(ctx, n), max(len(diff.tags), 1), 10),
        _Section("trend", lambda n: _trend(ctx) if n is None or n > 0 else "", 1),
        _Section("improvements", lambda n: _improvements(ctx, n), len(diff.improvements)),
        _Section("unchanged", lambda n: _unchanged(ctx, n), len(diff.unchanged)),
        _Section("details", lambda n: _run_details(ctx, n), len(diff.config)),
    ]


# Cut first: the least important detail.
_DROP_ORDER = ("unchanged", "details", "improvements", "trend", "tags", "goldset", "cutoff",
               "stale", "judged", "matrix", "gate", "regressions")


def _head(ctx: ReportContext) -> str:
    lines = [marker(ctx.marker_suffix), f"### {verdict(ctx)}", _baseline_line(ctx)]
    changed = _changed_line(ctx.diff)
    title = f"Gold set: {escape_md(ctx.title, 80)}" if ctx.title else ""
    tail = [x for x in (changed, title) if x]
    text = lines[0] + "\n" + lines[1] + "\n" + lines[2]
    if tail:
        text += " \\\n" + " \\\n".join(tail)
    return text + "\n\n" + _headline(ctx)


def _join(head: str, sections: list[_Section]) -> str:
    parts = [head] + [s.text for s in sections if s.text]
    return "\n\n".join(parts) + "\n"


def render_markdown(ctx: ReportContext, budget: int | None = DEFAULT_BUDGET) -> str:
    """The PR comment. Under ``budget`` characters (hard-capped below GitHub's 65,536)
    whatever the size of the diff; ``None`` renders everything (the job summary)."""
    head = _head(ctx)
    sections = _sections(ctx)
    for s in sections:
        s.text = s.render(None)
    text = _join(head, sections)
    if budget is None:
        return text
    budget = min(budget, GITHUB_LIMIT - 1)
    if len(text) <= budget:
        return text
    by_key = {s.key: s for s in sections}
    total = len(text)
    for key in _DROP_ORDER:
        if total <= budget:
            break
        s = by_key[key]
        others = total - len(s.text)
        floor = min(s.floor, s.size)
        lo, hi = floor, s.size  # the largest limit that fits, found by bisection
        best = s.render(floor)
        while lo <= hi:
            mid = (lo + hi) // 2
            candidate = s.render(mid)
            if others + len(candidate) <= budget:
                best, lo = candidate, mid + 1
            else:
                hi = mid - 1
        s.text = best
        total = len(_join(head, sections))
    text = _join(head, sections)
    if len(text) > budget:  # only the fixed parts left: cut at a line boundary
        cut = text.rfind("\n", 0, budget - len(_TRUNCATED))
        text = text[: max(cut, 0)] + _TRUNCATED
    return text


# --------------------------------------------------------------------------- JSON


def _clean(value):
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _plain_verdict(ctx: ReportContext) -> str:
    return verdict(ctx)


def report_dict(ctx: ReportContext) -> dict:
    diff, gate = ctx.diff, ctx.gate
    c = diff.cutoff

    def side(s: CutoffSide | None):
        if s is None:
            return None
        return {"cutoff": s.cutoff, "gap": list(s.gap) if s.gap else None,
                "has_gap": s.has_gap, "suggested": s.suggested,
                "false_not_found": list(s.false_not_found),
                "false_answers": list(s.false_answers),
                "answerable": len(s.answerable), "unanswerable": len(s.unanswerable)}

    def question(q: QuestionChange) -> dict:
        return {"id": q.id, "kind": q.kind, "detail": q.detail, "base_rank": q.base_rank,
                "head_rank": q.head_rank, "tags": list(q.tags), "deltas": dict(q.deltas),
                "error": q.error}

    mx = diff.matrix
    return _clean({
        "report": "ci-eval/1",
        "passed": gate.passed,
        "verdict": _plain_verdict(ctx),
        "baseline": ctx.baseline.as_dict() | {
            "present": diff.has_base,
            "sha": ctx.baseline.sha or (diff.base_info.sha if diff.base_info else None),
            "index_version": diff.base_info.index_version if diff.base_info else None},
        "head": {"sha": diff.head_info.sha, "index_version": diff.head_info.index_version,
                 "k": diff.k, "questions": diff.head_info.questions},
        "compared": len(diff.compared),
        "metrics": [{"metric": m.name, "base": m.base, "head": m.head, "delta": m.delta,
                     "head_overall": m.head_overall, "base_overall": m.base_overall,
                     "missing": m.missing, "test": m.test.as_dict() if m.test else None}
                    for m in diff.metrics],
        "gate": gate.as_dict(),
        "regressions": [question(q) for q in diff.regressions],
        "improvements": [question(q) for q in diff.improvements],
        "unchanged": [q.id for q in diff.unchanged],
        "tags": [{"tag": t.tag, "n": t.n,
                  "metrics": {m: {"base": b, "head": h} for m, b, h in t.metrics}}
                 for t in diff.tags],
        "gold_set": {"added": [r.id for r in diff.goldset.added],
                     "removed": [r.id for r in diff.goldset.removed],
                     "relabelled": {r.id: r.note for r in diff.goldset.relabelled}},
        "stale": {"questions": {q.id: list(q.ids) for q in diff.stale.head},
                  "new": [q.id for q in diff.stale.new],
                  "resolved": [q.id for q in diff.stale.resolved],
                  "index_changed": diff.index_changed},
        "config": [{"path": x.path, "base": x.base, "head": x.head} for x in diff.config],
        "latency_ms": {stat: {"base": b, "head": h} for stat, b, h in diff.latency},
        "failure_matrix": None if not mx.available else {
            "head": dict(mx.head.counts), "base": dict(mx.base.counts) if mx.base else None,
            "transitions": [{"id": t.id, "from": t.before, "to": t.after, "kind": t.kind}
                            for t in mx.transitions],
            "own_knowledge": list(mx.own_knowledge)},
        "cutoff": {"head": side(c.head), "base": side(c.base)},
        "judged": _judged_dict(ctx.judged),
    })


def _judged_dict(j: JudgedReport | None) -> dict | None:
    if j is None:
        return None
    return {"k": j.k, "head_mean": j.head_mean, "base_mean": j.base_mean, "new_unjudged": j.new_unjudged,
            "questions": j.questions, "unjudged_regressions": sorted(j.suspects)}


def render_json(ctx: ReportContext) -> str:
    return json.dumps(report_dict(ctx), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
