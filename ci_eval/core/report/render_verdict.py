"""The comment's first lines: the one-sentence verdict, the baseline it was measured
against, and the config changes that matter."""

from __future__ import annotations

import re
from collections import Counter

from ci_eval.core.compare.diff import Changes, Diff, MetricChange
from ci_eval.core.compare.diff_goldset import Rechunk
from ci_eval.core.compare.gate import partly_stale_clause
from ci_eval.core.report.escape import code_span, escape_md
from ci_eval.core.report.markdown import ids, metric, short_sha
from ci_eval.core.report.render_context import ReportContext
from ci_eval.core.textfmt import f3, plural, signed, test_text

RELATIVE_RULES = ("max_drop", "max_new_misses", "protected", "lost_gold", "max_rank_drop")


def headline_metric(diff: Diff) -> MetricChange | None:
    preferred = [f"hit@{diff.k}", "mrr", f"recall@{diff.k}", f"ndcg@{diff.k}"]
    for name in preferred + [m.name for m in diff.metrics]:
        m = diff.metric(name)
        if m is not None and m.head_overall is not None:
            return m
    return None


def _where(questions: Changes) -> str:
    """Which questions were lost: each of up to three named with its tags, else the first
    five named and the commonest tags (read from the columns: no change is built)."""
    if len(questions) <= 3:
        return ": " + ", ".join(
            code_span(qid, 40, in_table=False)
            + (f" ({', '.join(escape_md(t, 30) for t in tags[:2])})" if tags else "")
            for qid, tags in zip(questions.ids(), questions.tags()))
    named = ": " + ids(questions.ids(), 5)
    tags = Counter(t for q_tags in questions.tags() for t in set(q_tags))
    if tags:
        top = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        return named + "; by tag: " + ", ".join(f"{escape_md(t, 30)} {n}" for t, n in top)
    return named


def lost_questions(diff: Diff) -> Changes:
    return diff.lost_changes


def _lost_clause(diff: Diff) -> str:
    lost = lost_questions(diff)
    if not lost:
        return ""
    return (f"; {plural(len(lost), 'question')} lost {'its' if len(lost) == 1 else 'their'} "
            f"gold chunk at k={diff.k}{_where(lost)}")


def _moved(m: MetricChange, verb: str) -> str:
    label = "significant" if m.test and m.test.significant else "within noise"
    stat = test_text(m.test)
    return (f"{metric(m.name)} {verb} {f3(m.base)} → {f3(m.head)} "
            f"({label}{', ' + stat if stat else ''})")


def _aside(diff: Diff) -> str:
    """What a passing verdict must not hide: stale gold, gold-set edits, a lost cutoff gap."""
    parts = []
    if diff.stale.new:
        drift = (f" after the index changed to {code_span(diff.head_info.index_version, 40, False)}"
                 if diff.index_changed and diff.head_info.index_version else "")
        parts.append(f"{plural(len(diff.stale.new), 'question')} now "
                     f"{'has' if len(diff.stale.new) == 1 else 'have'} stale gold{drift} "
                     "(kept out, not a regression)")
    g = diff.goldset
    if g.any and diff.comparable:
        parts.append(f"the gold set changed ({len(g.added)} added, {len(g.removed)} removed, "
                     f"{len(g.relabelled)} relabelled; compared on the rest)")
    base, head = diff.cutoff.base, diff.cutoff.head
    if head.checkable and not head.has_gap and (base is None or base.has_gap):
        parts.append("answerable and unanswerable top scores "
                     + ("now overlap" if base is not None else "overlap")
                     + ": no cutoff separates them")
    return "".join(f"; {p}" for p in parts)


def _across(r: Rechunk) -> str:
    if r.spans:
        return (f"compared across a re-chunk (index {code_span(r.from_version or 'unversioned', 40, False)} → "
                f"{code_span(r.to_version or 'unversioned', 40, False)}; "
                f"{plural(r.spans, 'question')} through their span gold)")
    return (f"compared across a re-chunk (index {code_span(r.from_version or 'unversioned', 40, False)} → "
            f"{code_span(r.to_version or 'unversioned', 40, False)}; "
            f"{plural(r.questions, 'question')} through the remap, "
            f"{plural(r.proposals, 'proposal')} accepted by a person)")


def _more_failed(n: int) -> str:
    return f" (+{plural(n, 'more failed rule')})" if n > 0 else ""


def _no_comparison(ctx: ReportContext) -> str:
    diff, gate = ctx.diff, ctx.gate
    reason = escape_md(diff.no_comparison, 300)
    blocked = [f for f in gate.failures if f.rule in RELATIVE_RULES and f.rule not in _PER_QUESTION]
    if gate.per_question is not None:  # the compared questions were judged one by one
        return _few_compared(ctx, reason, blocked)
    if blocked:
        names = ", ".join(dict.fromkeys(f"{f.rule} {metric(f.subject)}".strip() for f in blocked))
        rest = len(gate.failures) - len(blocked)
        return (f"❌ No comparison possible: {reason}; so {names} cannot be checked "
                f"(fail closed){_more_failed(rest)}.")
    if gate.failures:
        return (f"❌ No comparison possible: {reason}; and "
                f"{escape_md(gate.failures[0].message, 200)}{_more_failed(len(gate.failures) - 1)}.")
    return (f"⚠️ No comparison possible: {reason}; no relative rule is configured, and the "
            "floors and errors pass.")


def _few_compared(ctx: ReportContext, reason: str, blocked: list) -> str:
    """Too few compared questions for the paired tests, judged one by one all the same: the
    facts, then why the means were not compared and what could not be checked for it."""
    gate = ctx.gate
    facts = _facts(ctx)
    found = gate.per_question
    icon = "❌" if gate.failures else ("⚠️" if found.failing or ctx.diff.lost > len(found.excused) else "✅")
    names = ", ".join(dict.fromkeys(f"{f.rule} {metric(f.subject)}".strip() for f in blocked))
    cannot = f"; so {names} cannot be checked (fail closed)" if names else ""
    own = [f for f in gate.failures if f.rule in _PER_QUESTION]
    counted = (f" Gate failed on {' and '.join(dict.fromkeys(f.rule for f in own))}." if own else "")
    return (f"{icon} {facts[0].upper()}{facts[1:]}{_aside(ctx.diff)}. The means were not compared: "
            f"{reason}{cannot}.{counted}")


def _failed(ctx: ReportContext) -> str:
    diff, failures = ctx.diff, ctx.gate.failures
    more = _more_failed(len(failures) - 1)
    prefer = {f"hit@{diff.k}": 0, "mrr": 1}
    by_rule: dict = {}
    for x in sorted(failures, key=lambda x: prefer.get(x.subject, 2)):
        by_rule.setdefault(x.rule, x)
    if "errors" in by_rule and not diff.errors:  # a further pass of a repeated run failed
        message = by_rule["errors"].message
        return f"❌ {escape_md(message[:1].upper() + message[1:], 300)}{more}."
    if "errors" in by_rule:
        f = by_rule["errors"]
        return (f"❌ The retriever failed on {plural(len(f.question_ids), 'question')} "
                f"(fail closed): {ids(f.question_ids, 3)}{more}.")
    if diff.has_base and diff.no_comparison:
        return _no_comparison(ctx)
    if "max_drop" in by_rule:
        m = diff.metric(by_rule["max_drop"].subject)
        return f"❌ Retrieval regressed: {_moved(m, 'fell')}{_lost_clause(diff)}{more}."
    if "min" in by_rule:
        f = by_rule["min"]
        m = diff.metric(f.subject)
        if m is None or m.head_overall is None:
            return f"❌ {escape_md(f.message, 200)}{more}."
        return (f"❌ Below the floor: {metric(m.name)} is {f3(m.head_overall)} "
                f"(floor {f3(f.threshold)}){partly_stale_clause(diff, m.name, f.threshold)}"
                f"{_lost_clause(diff)}{more}.")
    if "protected" in by_rule:
        qs = by_rule["protected"].question_ids
        return (f"❌ {plural(len(qs), 'protected question')} not a hit at k={diff.k}: "
                f"{ids(qs, 3)}{_lost_clause(diff)}{more}.")
    return f"❌ {escape_md(failures[0].message, 300)}{more}."


def _group(label: str, found: list[str]) -> str:
    return f"{label}{ids(found, 3)}" if found else ""


def _lost_facts(ctx: ReportContext) -> str:
    """"3 questions lost their gold chunk at k=5: `q-040`; accepted: `q-009`; known to flap
    on main: `q-028`" (the ones that count first); "" when none was lost."""
    diff, found = ctx.diff, ctx.gate.per_question
    lost = lost_questions(diff)
    n = len(lost)
    if not n:
        return ""
    head = f"{plural(n, 'question')} lost {'its' if n == 1 else 'their'} gold chunk at k={diff.k}"
    if found is None or not found.excused:
        return head + _where(lost)
    # each group in the list's order: most severe first
    order = list(lost.ids())
    on_list = set(order)
    accepted_ids = {e.loss.question for e in found.accepted}
    flapping_ids = {e.loss.question for e in found.flapping}
    accepted = [q for q in order if q in accepted_ids] + sorted(accepted_ids - on_list)
    flapping = [q for q in order if q in flapping_ids] + sorted(flapping_ids - on_list)
    rest = [qid for qid in order if qid not in accepted_ids | flapping_ids]
    if not rest:
        every = "" if n == 1 else ("both " if n == 2 else "all ")
        parts = [_group(f"{every}accepted: " if not flapping else "accepted: ", accepted),
                 _group(f"{every}known to flap on {ctx.branch_name}: " if not accepted
                        else f"known to flap on {ctx.branch_name}: ", flapping)]
        return head + ", " + "; ".join(p for p in parts if p)
    parts = [_group("accepted: ", accepted), _group(f"known to flap on {ctx.branch_name}: ", flapping)]
    return head + ": " + ids(rest, 3) + "".join(f"; {p}" for p in parts if p)


def _gained_ids(diff: Diff) -> list[str]:
    return [qid for qid, kind in zip(diff.improvements.ids(), diff.improvements.kinds()) if kind == "gained"]


def _facts(ctx: ReportContext) -> str:
    """What happened, question by question: lost and gained at k, else how many moved."""
    diff = ctx.diff
    lost, gained = _lost_facts(ctx), _gained_ids(diff)
    gain = f"{plural(len(gained), 'question')} gained {'its' if len(gained) == 1 else 'their'} gold chunk at k={diff.k}"
    if lost and gained:
        return f"{lost}; {len(gained)} gained: {ids(gained, 3)}"
    if lost:
        return lost
    if gained:
        return f"{gain}: {ids(gained, 3)}; none lost"
    if not diff.moved:
        return f"every one of the {plural(len(diff.compared), 'compared question')} is as before"
    return (f"no question lost or gained its gold chunk at k={diff.k}; "
            f"{plural(diff.moved, 'question')} moved within {'its' if diff.moved == 1 else 'their'} ranking")


def promised_metric(ctx: ReportContext) -> MetricChange | None:
    """The metric the gate promises: its first floor's, else the headline's (hit@k first)."""
    for o in ctx.gate.outcomes:
        if o.rule == "min":
            m = ctx.diff.metric(o.subject)
            if m is not None and m.test is not None:
                return m
    return headline_metric(ctx.diff)


def _meaning(ctx: ReportContext) -> str:
    """The promised metric's change with its uncertainty, in one sentence: what a paired
    test can add to the facts (would the change hold on questions not written yet?)."""
    m = promised_metric(ctx)
    if m is None or m.test is None or m.base is None or m.head is None:
        return ""
    n = len(ctx.diff.compared)
    if abs(m.delta or 0.0) < 1e-12:
        return f" {metric(m.name)} held at {f3(m.head)} over the {plural(n, 'compared question')}."
    stat = test_text(m.test)
    verb = "rose" if m.delta > 0 else "fell"
    said = ("more than chance explains, so it should carry over to questions the gold set does not have"
            if m.test.significant else
            "chance could explain it, so it may not carry over to questions the gold set does not have")
    return (f" {metric(m.name)} {verb} {f3(m.base)} → {f3(m.head)} ({signed(m.delta)}"
            f"{'; ' + stat if stat else ''}): on {plural(n, 'question')}, {said}.")


_PER_QUESTION = ("lost_gold", "max_rank_drop")


def _failure_clause(ctx: ReportContext) -> str:
    """Which rule failed, after the facts and the metric: the per-question rules first (the
    facts said what they count), else the most telling other rule, and how many more."""
    diff, failures = ctx.diff, ctx.gate.failures
    more = _more_failed(len(failures) - 1)
    own = [f for f in failures if f.rule in _PER_QUESTION]
    if own:
        n = sum(len(f.question_ids) for f in own)
        rules = " and ".join(dict.fromkeys(f.rule for f in own))
        return (f" Gate failed on {rules}: {plural(n, 'loss', 'losses')} neither accepted nor flapping "
                f"on the base{more}.")
    prefer = {f"hit@{diff.k}": 0, "mrr": 1}
    f = sorted(failures, key=lambda x: prefer.get(x.subject, 2))[0]
    if f.rule == "min" and f.threshold is not None and f.value is not None:
        return (f" Gate failed: {metric(f.subject)} is {f3(f.value)}, below the floor {f3(f.threshold)}"
                f"{partly_stale_clause(diff, f.subject, f.threshold)}{more}.")
    if f.rule == "max_drop":
        m = diff.metric(f.subject)
        return f" Gate failed on max_drop: {_moved(m, 'fell')}{more}."
    if f.rule == "protected":
        return (f" Gate failed: {plural(len(f.question_ids), 'protected question')} not a hit at "
                f"k={diff.k}: {ids(f.question_ids, 3)}{more}.")
    return f" Gate failed on {f.rule}: {escape_md(f.message, 200)}{more}."


def _compared(ctx: ReportContext) -> str:
    """The verdict of a comparison: the facts first, then what the promised metric says,
    then, when the gate failed, which rule."""
    diff, gate = ctx.diff, ctx.gate
    aside = _aside(diff)
    nothing_moved = not diff.moved and not any(x.moved for x in diff.metrics)
    if nothing_moved and not gate.passed:
        return _failed(ctx)  # no fact to tell: the failed rule is the news
    if nothing_moved:
        m = headline_metric(diff)
        what = f" ({metric(m.name)} {f3(m.head)})" if m and m.head is not None else ""
        return (f"✅ No change: every metric of all "
                f"{plural(len(diff.compared), 'compared question')} is as before{what}{aside}.")
    facts = _facts(ctx)
    found = gate.per_question
    counted = bool(diff.lost) and (found is None or bool(found.failing) or len(found.excused) < diff.lost)
    if not gate.passed:
        lead = "❌ " + facts[0].upper() + facts[1:]
    elif counted:
        lead = "⚠️ Gate passed, but " + facts
    elif _gained_ids(diff) and not diff.lost:
        lead = "✅ Retrieval improved: " + facts
    else:
        lead = "✅ " + facts[0].upper() + facts[1:]
    return f"{lead}{aside}.{_meaning(ctx)}{_failure_clause(ctx) if not gate.passed else ''}"


def verdict(ctx: ReportContext) -> str:
    """The headline: pass or fail; what happened question by question, then what the
    promised metric's change means."""
    diff = ctx.diff
    errors = any(f.rule == "errors" for f in ctx.gate.failures)
    if errors or (ctx.gate.failures and (not diff.has_base or diff.no_comparison)):
        return _failed(ctx)
    if ctx.baseline.kind == "outage":
        # The job exits 5 (core/plan.decide_outcome): the comment must not read as a pass.
        return (f"❌ Not compared: {_describe(ctx.baseline.description or 'GitHub failed while the baseline was looked up')}"
                "; this check fails until the job is re-run (the floors and errors pass).")
    if not diff.has_base:
        m = headline_metric(diff)
        head = f"{metric(m.name)} {f3(m.head_overall)}" if m else "no metrics"
        return (f"✅ No baseline to compare against, so nothing was compared; this run alone: "
                f"{head}, and the floors pass{_aside(diff)}.")
    if diff.no_comparison:
        return _no_comparison(ctx)
    return _compared(ctx)


# --------------------------------------------------------------------------- baseline line

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


def _file_baseline(ctx: ReportContext) -> str:
    b, bi = ctx.baseline, ctx.diff.base_info
    name = f"artefact {code_span(b.path, 80, False)}" if b.path else "an artefact"
    sha = b.sha or bi.sha
    commit = f" of commit {short_sha(sha)}" if sha else " (no commit was recorded in it)"
    return f"{name}{commit}"


def _what(ctx: ReportContext) -> str:
    b, bi = ctx.baseline, ctx.diff.base_info
    if b.description:
        return _describe(b.description)
    sha = b.sha or bi.sha
    age = f", {escape_md(b.age, 40)}" if b.age else ""
    why = f" ({escape_md(b.reason, 160)})" if b.reason else ""
    if b.kind == "exact":
        return f"the PR's base commit {short_sha(sha)}{age}"
    if b.kind == "fallback":
        return f"fallback {short_sha(sha)}{age}{why}"
    if b.kind == "file":
        return f"{_file_baseline(ctx)}{age}{why}"
    return f"artefact of {short_sha(sha)}{age}{why}"


def _dirty(diff: Diff) -> str:
    sides = [name for name, info in (("base", diff.base_info), ("head", diff.head_info))
             if info is not None and info.dirty]
    if not sides:
        return ""
    return (f"; ⚠️ {' and '.join(sides)} built from a dirty tree (uncommitted changes: "
            "the commit alone does not reproduce it)")


def baseline_line(ctx: ReportContext) -> str:
    b, diff = ctx.baseline, ctx.diff
    link = _run_link(b.url)
    if not diff.has_base or b.kind == "none":
        why = _describe(b.description or b.reason or "no base artefact")
        return (f"**Baseline:** none: {why}{link}. Nothing to compare against; only floors "
                f"and errors were checked{_dirty(diff)}.")
    hv, bv = diff.head_info.index_version, diff.base_info.index_version
    if diff.goldset.rechunk is not None and diff.comparable:
        # the index change is named inside the re-chunk's sentence
        return (f"**Baseline:** {_what(ctx)}{link}; {plural(len(diff.compared), 'question')} "
                f"{_across(diff.goldset.rechunk)}{_dirty(diff)}.")
    if bv != hv:
        index = (f"index {code_span(bv or 'unversioned', 40, False)} → "
                 f"{code_span(hv or 'unversioned', 40, False)}")
    else:
        index = f"index {code_span(hv or 'unversioned', 40, False)}"
    return (f"**Baseline:** {_what(ctx)}{link}; {index}; "
            f"{plural(len(diff.compared), 'question')} compared{_dirty(diff)}.")


def _rechunked(diff: Diff) -> list[str]:
    """"index re-chunked" with both sides' chunk counts and mean lengths, when questions
    were compared across a recorded remap onto a new index and both runs recorded them
    (their manifests gave every chunk's length). A new index version alone may be fresh
    content on the same chunking: the remap is what says the chunks were re-cut; "chunk ids
    renamed" instead when both runs recorded the same cuts (every chunk's doc, start, end)."""
    b, h = diff.base_info, diff.head_info
    if (not diff.index_changed or diff.goldset.rechunk is None or None in (b.index_ids, h.index_ids)
            or None in (b.index_mean_chars, h.index_mean_chars)):
        return []
    if b.index_cuts and b.index_cuts == h.index_cuts:
        # every chunk where it was: a new index version that only renamed the ids
        return [f"chunk ids renamed ({h.index_ids:,} chunks, cut where they were)"]
    return [f"index re-chunked ({b.index_ids:,} → {h.index_ids:,} chunks, mean "
            f"{b.index_mean_chars:,.0f} → {h.index_mean_chars:,.0f} characters)"]


def changed_line(diff: Diff, limit: int = 3) -> str:
    parts = _rechunked(diff) + [f"{code_span(c.path, 60, False)} {code_span(c.base, 40, False)} → "
                                f"{code_span(c.head, 40, False)}" for c in diff.config[:limit]]
    if not parts:
        return ""
    more = f" (+{len(diff.config) - limit} more)" if len(diff.config) > limit else ""
    return "**Changed:** " + "; ".join(parts) + more
