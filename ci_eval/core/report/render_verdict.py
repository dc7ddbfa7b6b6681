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
from ci_eval.core.textfmt import f3, plural, test_text

RELATIVE_RULES = ("max_drop", "max_new_misses", "protected")


def headline_metric(diff: Diff) -> MetricChange | None:
    preferred = [f"hit@{diff.k}", "mrr", f"recall@{diff.k}", f"ndcg@{diff.k}"]
    for name in preferred + [m.name for m in diff.metrics]:
        m = diff.metric(name)
        if m is not None and m.head_overall is not None:
            return m
    return None


def _where(questions: Changes) -> str:
    """Where the lost questions are: each of up to three named, else the commonest tags (read
    from the columns: no change is built)."""
    if len(questions) <= 3:
        return ": " + ", ".join(
            code_span(qid, 40, in_table=False)
            + (f" ({', '.join(escape_md(t, 30) for t in tags[:2])})" if tags else "")
            for qid, tags in zip(questions.ids(), questions.tags()))
    tags = Counter(t for q_tags in questions.tags() for t in set(q_tags))
    if tags:
        top = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        return "; by tag: " + ", ".join(f"{escape_md(t, 30)} {n}" for t, n in top)
    return ": " + ids(questions.ids(), 3)


def lost_questions(diff: Diff) -> Changes:
    return diff.lost_changes


def _gained(diff: Diff) -> int:
    return sum(1 for kind in diff.improvements.kinds() if kind == "gained")


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
    blocked = [f for f in gate.failures if f.rule in RELATIVE_RULES]
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


def _failed(ctx: ReportContext) -> str:
    diff, failures = ctx.diff, ctx.gate.failures
    more = _more_failed(len(failures) - 1)
    prefer = {f"hit@{diff.k}": 0, "mrr": 1}
    by_rule: dict = {}
    for x in sorted(failures, key=lambda x: prefer.get(x.subject, 2)):
        by_rule.setdefault(x.rule, x)
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


def _significant(diff: Diff, sign: int) -> list[MetricChange]:
    prefer = {f"hit@{diff.k}": 0, "mrr": 1}
    found = [m for m in diff.metrics
             if m.test and m.test.significant and m.test.delta * sign > 0]
    return sorted(found, key=lambda m: prefer.get(m.name, 2))


def _passed(ctx: ReportContext) -> str:
    diff = ctx.diff
    downs, ups = _significant(diff, -1), _significant(diff, +1)
    if downs:
        return (f"⚠️ Gate passed, but retrieval regressed: {_moved(downs[0], 'fell')}"
                f"{_lost_clause(diff)}{_aside(diff)}.")
    if ups:
        gained = _gained(diff)
        tail = (f"; {plural(gained, 'question')} found "
                f"{'its' if gained == 1 else 'their'} gold chunk again at k={diff.k}"
                if gained else "")
        return f"✅ Retrieval improved: {_moved(ups[0], 'rose')}{tail}{_aside(diff)}."
    moved = diff.moved
    m = headline_metric(diff)
    if not moved and not any(x.moved for x in diff.metrics):
        what = f" ({metric(m.name)} {f3(m.head)})" if m and m.head is not None else ""
        return (f"✅ No change: every metric of all "
                f"{plural(len(diff.compared), 'compared question')} is as before"
                f"{what}{_aside(diff)}.")
    lost = diff.lost
    gained = _gained(diff)
    head = f"{_moved(m, 'moved')}; " if m and m.test and m.delta else ""
    return (f"✅ No significant change: {head}{lost} lost and {gained} gained "
            f"their gold chunk at k={diff.k}, {plural(moved, 'question')} moved"
            f"{_aside(diff)}.")


def verdict(ctx: ReportContext) -> str:
    """One sentence: pass or fail, and why."""
    diff = ctx.diff
    if ctx.gate.failures:
        return _failed(ctx)
    if not diff.has_base:
        m = headline_metric(diff)
        head = f"{metric(m.name)} {f3(m.head_overall)}" if m else "no metrics"
        return (f"✅ No baseline to compare against, so nothing was compared; this run alone: "
                f"{head}, and the floors pass{_aside(diff)}.")
    if diff.no_comparison:
        return _no_comparison(ctx)
    return _passed(ctx)


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
