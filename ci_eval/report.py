"""One comparison of two run artefacts: the diff, the gate and every rendering of them."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.gate import GatePolicy, GateResult, evaluate_gate, merge_overrides
from ci_eval.core.render import (
    DEFAULT_BUDGET,
    BaselineInfo,
    ReportContext,
    marker,
    render_json,
    render_markdown,
    verdict,
)


@dataclass(frozen=True)
class Report:
    """Everything one comparison produces; callers write or post what they need."""

    context: ReportContext
    markdown: str  # the PR comment, within the budget
    full_markdown: str  # no budget: the job summary
    json: str
    svg: str
    trend_svg: str  # headline metrics over the base branch's recent runs and this one

    @property
    def passed(self) -> bool:
        return self.context.gate.passed

    @property
    def gate(self) -> GateResult:
        return self.context.gate

    @property
    def marker(self) -> str:
        return marker(self.context.marker_suffix)

    @property
    def verdict_line(self) -> str:
        return verdict(self.context)

    @property
    def changed(self) -> bool:
        """Whether there is something to say against the baseline (for on-change comments):
        no baseline, a failed gate, a moved question or metric, gold-set or stale edits."""
        d = self.context.diff
        return (not d.has_base or not self.passed or d.index_changed or d.goldset.any
                or bool(d.stale.new or d.stale.resolved)
                or any(q.kind != "same" for q in d.questions)
                or any(m.delta for m in d.metrics if m.delta is not None))


def policy_from(gate: dict | None, mins: list[str] | None = None,
                max_drops: list[str] | None = None) -> GatePolicy:
    """The gate policy of a config's ``[gate]`` table, with CLI overrides on top."""
    return merge_overrides(GatePolicy.from_mapping(gate or {}), mins or [], max_drops or [])


def build_report(base: dict | None, head: dict, policy: GatePolicy,
                 baseline_info: BaselineInfo | None = None, *, marker_suffix: str = "",
                 title: str = "", budget: int | None = DEFAULT_BUDGET) -> Report:
    """Diff, significance, gate and every rendering of one comparison."""
    from ci_eval.core.cutoff import render_svg
    from ci_eval.core.diff import diff as compute_diff
    from ci_eval.core.judged import judged_report
    from ci_eval.core.trend import render_trend_svg

    d = compute_diff(base, head)
    if baseline_info is None:
        baseline_info = BaselineInfo(kind="file" if base is not None else "none")
    ctx = ReportContext(d, evaluate_gate(policy, d), baseline_info, marker_suffix, title,
                        judged_report(base, head, (q.id for q in d.regressions)),
                        remap=(head.get("index") or {}).get("remap"))
    return Report(
        context=ctx,
        markdown=render_markdown(ctx, budget),
        full_markdown=render_markdown(ctx, None),
        json=render_json(ctx),
        svg=render_svg(d.cutoff.head),
        trend_svg=render_trend_svg(head, _trend_metrics(head)),
    )


def _trend_metrics(head: dict) -> list[str]:
    k = head.get("k")
    wanted = [f"hit@{k}", "mrr", f"ndcg@{k}", f"hit@{3 * k}" if isinstance(k, int) else ""]
    measured = (head.get("summary") or {}).get("overall", {}).get("means", {})
    return [m for m in wanted if m in measured]
