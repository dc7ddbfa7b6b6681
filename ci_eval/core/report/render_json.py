"""The JSON report for machines: everything the comment says, without the budget."""

from __future__ import annotations

import json
import math

from ci_eval.core.compare.cutoff import CutoffSide
from ci_eval.core.compare.diff import Diff, QuestionChange
from ci_eval.core.compare.judged import JudgedReport
from ci_eval.core.report.render_context import ReportContext
from ci_eval.core.report.render_verdict import verdict


def _clean(value):
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _side(s: CutoffSide | None):
    if s is None:
        return None
    best = s.least_wrong
    return {"cutoff": s.cutoff, "gap": list(s.gap) if s.gap else None,
            "has_gap": s.has_gap, "suggested": s.suggested, "scores_are_ranks": s.ranks,
            "least_wrong": None if best is None else {
                "cutoff": best[0], "false_not_found": best[1], "false_answers": best[2]},
            "false_not_found": list(s.false_not_found),
            "false_answers": list(s.false_answers),
            "answerable": len(s.answerable), "unanswerable": len(s.unanswerable)}


def _question(q: QuestionChange) -> dict:
    return {"id": q.id, "kind": q.kind, "detail": q.detail, "base_rank": q.base_rank,
            "head_rank": q.head_rank, "tags": list(q.tags), "deltas": dict(q.deltas),
            "worse": list(q.worse), "better": list(q.better),
            "gold_moves": [{"id": m.id, "grade": m.grade, "base_rank": m.base_rank,
                            "head_rank": m.head_rank, "crossed": m.crossed} for m in q.moves],
            "error": q.error}


def _tag(t) -> dict:
    """A tag's means and, within the tag family (Holm over every tag x metric pair), its
    tests."""
    def test(name):
        x = t.test(name)
        return {} if x is None else {"p_value": x.p_value, "p_adjusted": x.p_adjusted,
                                     "significant": x.significant}
    return {"tag": t.tag, "n": t.n,
            "metrics": {m: {"base": b, "head": h, **test(m)} for m, b, h in t.metrics}}


def _metrics(diff: Diff) -> list:
    return [{"metric": m.name, "base": m.base, "head": m.head, "delta": m.delta,
             "head_overall": m.head_overall, "base_overall": m.base_overall,
             "missing": m.missing, "test": m.test.as_dict() if m.test else None}
            for m in diff.metrics]


def _matrix(diff: Diff):
    mx = diff.matrix
    if not mx.available:
        return None
    return {"head": dict(mx.head.counts), "base": dict(mx.base.counts) if mx.base else None,
            "largest": list(mx.head.largest),
            "transitions": [{"id": t.id, "from": t.before, "to": t.after, "kind": t.kind}
                            for t in mx.transitions],
            "own_knowledge": list(mx.own_knowledge),
            # questions measured with and without a verdict; where the verdicts came from
            "known": mx.head.known, "unknown": mx.head.unknown, "source": diff.head_info.answers}


def _rechunk(r) -> dict | None:
    """The questions compared through head's recorded remap, or through their span gold
    (``span_gold``, only then), None when none were."""
    if r is None:
        return None
    return {"from_index_version": r.from_version, "to_index_version": r.to_version,
            "questions": r.questions, "proposals_accepted": r.proposals,
            **({"span_gold": r.spans} if r.spans else {})}


def _sets(diff: Diff) -> dict:
    return {
        "gold_set": {"added": [r.id for r in diff.goldset.added],
                     "removed": [r.id for r in diff.goldset.removed],
                     "relabelled": {r.id: r.note for r in diff.goldset.relabelled},
                     "rechunk": _rechunk(diff.goldset.rechunk)},
        "stale": {"questions": {q.id: list(q.ids) for q in diff.stale.head},
                  "new": [q.id for q in diff.stale.new],
                  "resolved": [q.id for q in diff.stale.resolved],
                  "index_changed": diff.index_changed},
        "config": [{"path": x.path, "base": x.base, "head": x.head} for x in diff.config],
        "warnings": [{"warning": w.label, "questions": list(w.ids)} for w in diff.warnings],
    }


def report_dict(ctx: ReportContext) -> dict:
    return _clean(_raw_report(ctx))


def _raw_report(ctx: ReportContext) -> dict:
    """The report before cleaning: NaN and the infinities still floats, tuples not lists."""
    diff, gate = ctx.diff, ctx.gate
    return {
        "report": "ci-eval/1",
        "passed": gate.passed,
        "verdict": verdict(ctx),
        "comparison": {"possible": diff.comparable, "reason": diff.no_comparison},
        "gate_source": {"path": ctx.gate_path, "how": ctx.gate_source or None},
        "baseline": ctx.baseline.as_dict() | {
            "present": diff.has_base,
            "sha": ctx.baseline.sha or (diff.base_info.sha if diff.base_info else None),
            "index_version": diff.base_info.index_version if diff.base_info else None},
        "head": {"sha": diff.head_info.sha, "index_version": diff.head_info.index_version,
                 "k": diff.k, "questions": diff.head_info.questions},
        "compared": len(diff.compared),
        "metrics": _metrics(diff),
        "gate": gate.as_dict(),
        "regressions": [_question(q) for q in diff.regressions],
        "improvements": [_question(q) for q in diff.improvements],
        "unchanged": [q.id for q in diff.unchanged],
        "tags": [_tag(t) for t in diff.tags],
        **_sets(diff),
        "latency_ms": {stat: {"base": b, "head": h} for stat, b, h in diff.latency},
        "failure_matrix": _matrix(diff),
        "cutoff": {"head": _side(diff.cutoff.head), "base": _side(diff.cutoff.base)},
        "judged": _judged(ctx.judged),
        **_stages(ctx.diff.stages),
    }


def _stage_summaries(summaries) -> list | None:
    if summaries is None:
        return None
    return [{"stage": s.spec.name, "depth": s.spec.depth, "chars": s.spec.chars, "reported": s.reported,
             "recall": s.recall, "held": s.held, "lost": s.lost, "added": s.added} for s in summaries]


def _stages(report) -> dict:
    """What the comment's stage section says, as data: each stage's recall and losses on
    both sides, the questions a stage lost, and the multi-step calls' hits (``null`` when
    the run recorded none)."""
    if report is None or report.empty:
        return {"stages": None, "calls": None}
    c = report.calls
    return {
        "stages": None if not report.chain else {
            "head": _stage_summaries(report.head), "base": _stage_summaries(report.base),
            "lost": [{"id": q.id, "stage": q.stage, "ranks": list(q.ranks)} for q in report.lost],
            "misses": dict(report.misses)},
        "calls": None if c is None else {
            "questions": c.questions, "budget": c.budget, "found_at": {str(n): q for n, q in c.found_at},
            "not_found": c.not_found, "hidden": c.hidden},
    }


def _judged(j: JudgedReport | None) -> dict | None:
    if j is None:
        return None
    return {"k": j.k, "head_mean": j.head_mean, "base_mean": j.base_mean,
            "new_unjudged": j.new_unjudged, "questions": j.questions,
            "unjudged_regressions": sorted(j.suspects)}


def render_json(ctx: ReportContext) -> str:
    """``report_dict(ctx)`` indented, keys sorted, and a newline."""
    # json's own writer: a hand-written one for the report's shapes bought 1.10x wall on
    # compare at 100,000 questions, under the 20 % bar (docs/benchmarks.md, "Speed mechanisms,
    # measured")
    return json.dumps(report_dict(ctx), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
