"""One comparison of two run artefacts: the diff, the gate and every rendering of them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from ci_eval.core.compare.gate import GatePolicy, GateResult, evaluate_gate, merge_overrides
from ci_eval.core.report.render import (
    DEFAULT_BUDGET,
    BaselineInfo,
    ReportContext,
    marker,
    render_json,
    render_markdown,
    render_summary,
    verdict,
)

if TYPE_CHECKING:
    from ci_eval.core.artefact.artefact import Artefact


@dataclass(frozen=True)
class Report:
    """Everything one comparison produces; callers write or post what they need."""

    context: ReportContext
    head: Artefact
    budget: int | None = DEFAULT_BUDGET

    # Each rendering is made when first asked for: `compare` prints one of them, and at
    # 100,000 questions each costs seconds.
    @cached_property
    def markdown(self) -> str:
        """The PR comment, within the budget."""
        return render_markdown(self.context, self.budget)

    @cached_property
    def full_markdown(self) -> str:
        """No budget: the full report (the bundle's summary.md, ``--summary-out``)."""
        return render_markdown(self.context, None)

    def job_summary(self, artifact: str) -> str:
        """The step's job summary: the full report, cut to GitHub's limit for it when over,
        naming the full report in the workflow artifact ``artifact``."""
        return render_summary(self.context, artifact)

    @cached_property
    def json(self) -> str:
        return render_json(self.context)

    @cached_property
    def svg(self) -> str:
        from ci_eval.core.compare.cutoff import render_svg

        return render_svg(self.context.diff.cutoff.head)

    @cached_property
    def trend_svg(self) -> str:
        """Headline metrics over the base branch's recent runs and this one."""
        from ci_eval.core.compare.trend import render_trend_svg

        return render_trend_svg(self.head, _trend_metrics(self.head))

    def keep_listed(self) -> None:
        """Build each change once for every rendering that lists them all (asked before
        writing both the job summary and the JSON report)."""
        self.context.diff.questions.columns.keep_listed()

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
                or bool(d.no_comparison)
                or d.moved > 0
                or any(m.moved for m in d.metrics))


def policy_from(gate: dict | None, mins: list[str] | None = None,
                max_drops: list[str] | None = None) -> GatePolicy:
    """The gate policy of a config's ``[gate]`` table, with CLI overrides on top; ``None``
    (no table) is the default gate (gate_policy.DEFAULT_GATE)."""
    return merge_overrides(GatePolicy.from_mapping(gate), mins or [], max_drops or [])


def build_report(base: dict | Artefact | None, head: dict | Artefact, policy: GatePolicy,
                 baseline_info: BaselineInfo | None = None, *, marker_suffix: str = "",
                 title: str = "", budget: int | None = DEFAULT_BUDGET,
                 gate_source: str = "", gate_path: str | None = None, recent=None,
                 base_branch: str = "", accepted=None, head_path: str = "") -> Report:
    """Diff, significance, gate and every rendering of one comparison. A dict is read by
    ``read_artefact``; the base keeps as many top results as the head's k (judged@k).
    ``recent``: the base branch's recent runs question by question (core/compare/recent_runs.py),
    named ``base_branch`` in the comment; with the base's ``--repeat`` record it says which
    questions flap. ``accepted``: the committed acceptances and the PR's label
    (core/compare/acceptance.Accepted)."""
    from ci_eval.core.artefact.artefact import read_artefact
    from ci_eval.core.compare.diff import diff as compute_diff
    from ci_eval.core.compare.judged import judged_report

    head_run = read_artefact(head)
    base_run = read_artefact(base, top=head_run.header.k) if base is not None else None
    d = compute_diff(base_run, head_run)
    if baseline_info is None:
        baseline_info = BaselineInfo(kind="file" if base is not None else "none")
    ctx = ReportContext(d, evaluate_gate(policy, d, accepted, recent), baseline_info, marker_suffix, title,
                        judged_report(base_run, head_run, d.regressions.ids()),
                        gate_source, gate_path, recent=recent, base_branch=base_branch, head_path=head_path)
    return Report(context=ctx, head=head_run, budget=budget)


def _trend_metrics(head) -> list[str]:
    k = head.header.k
    measured = dict(head.summary.overall.means)
    return [m for m in (f"hit@{k}", "mrr", f"ndcg@{k}", f"hit@{3 * k}") if m in measured]
