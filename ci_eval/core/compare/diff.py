"""Base run artefact vs head run artefact -> ``Diff``: what moved, where, and can we trust it.

Both inputs are run artefacts as dicts (``docs/artefact.md``), read once into typed records
(``core/artefact/artefact.py``); the base may be ``None`` (no baseline: a first run, an expired
artifact, a base commit never evaluated), which is a normal branch here, not an error.

Comparisons are made only on *compared* questions: present on both sides, with the same
label (gold ids and grades, unanswerable flag), no stale gold id on either side, and
measured on both (status ``ok`` or ``error``). Everything else is listed, never silently
mixed in: questions added, removed or relabelled in the PR; questions whose gold went stale
or came back. Fewer compared questions than ``MIN_SHARED`` is "no comparison possible",
with the reason, and the gate's relative rules fail closed on it.

The parts: ``diff_metrics`` (per metric), ``diff_questions`` (per question), ``diff_tags``
(per tag), ``diff_goldset`` (gold-set edits, stale gold, the no-comparison reason),
``diff_config`` (settings), ``run_warnings`` (what head's run survived).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ci_eval.core.artefact.artefact import MEASURED, Artefact, QuestionResult, RunHeader, read_artefact
from ci_eval.core.artefact.question_columns import ById, Questions, same_ids, sorted_by_id
from ci_eval.core.artefact.stage_records import RunStages
from ci_eval.core.compare.change_columns import ChangeColumns, Changes
from ci_eval.core.compare.cutoff import CutoffReport, analyse_cutoff
from ci_eval.core.compare.diff_config import ConfigChange, config_diff, format_value
from ci_eval.core.compare.diff_goldset import (
    MIN_SHARED,
    GoldSetChanges,
    QuestionRef,
    StaleChanges,
    StaleQuestion,
    no_comparison_reason,
    partition,
    shared_unusable,
    stale_changes,
)
from ci_eval.core.compare.diff_metrics import MetricChange, metric_changes, noise_ties, paired_values
from ci_eval.core.compare.diff_questions import (
    IMPROVEMENT_KINDS,
    KIND_ORDER,
    REGRESSION_KINDS,
    GoldMove,
    QuestionChange,
)
from ci_eval.core.compare.diff_tags import TagChange, tag_changes
from ci_eval.core.compare.matrix import FailureMatrix, failure_matrix
from ci_eval.core.compare.run_warnings import RunWarning, run_warnings
from ci_eval.core.compare.stages_report import StagesReport, stages_report

__all__ = ["MEASURED", "MIN_SHARED", "REGRESSION_KINDS", "IMPROVEMENT_KINDS", "KIND_ORDER",
           "Changes", "ConfigChange", "Diff", "GoldMove", "GoldSetChanges", "MetricChange",
           "QuestionChange", "QuestionRef", "RunWarning", "StaleChanges", "StaleQuestion",
           "TagChange", "config_diff", "diff", "format_value"]


@dataclass(frozen=True)
class Diff:
    k: int
    head_info: RunHeader
    base_info: RunHeader | None
    metrics: tuple[MetricChange, ...]
    compared: tuple[str, ...]
    questions: Changes  # one per compared question, sorted by id, built when read
    tags: tuple[TagChange, ...]
    goldset: GoldSetChanges
    stale: StaleChanges
    config: tuple[ConfigChange, ...]
    latency: tuple[tuple[str, float | None, float | None], ...]  # (stat, base, head)
    head_questions: Questions  # in id order, records made on demand
    base_questions: Questions | tuple
    matrix: FailureMatrix
    cutoff: CutoffReport
    history: tuple[tuple[str, str, tuple[tuple[str, float], ...]], ...]  # (sha, at, means)
    no_comparison: str | None = None  # why base and head cannot be compared
    warnings: tuple[RunWarning, ...] = ()
    head_stages: RunStages = field(default_factory=RunStages)  # the recorded stages and calls
    base_stages: RunStages | None = None

    @cached_property
    def stages(self) -> StagesReport:
        """Which stage lost the gold chunk (core/compare/stages_report.py)."""
        return stages_report(self.head_stages, self.base_stages if self.comparable else None,
                             self.compared, self.lost_changes.ids() if self.comparable else ())

    @property
    def has_base(self) -> bool:
        return self.base_info is not None

    @property
    def comparable(self) -> bool:
        return self.has_base and self.no_comparison is None

    @property
    def k3(self) -> int:
        return 3 * self.k

    @property
    def index_changed(self) -> bool:
        return (self.base_info is not None
                and self.base_info.index_version != self.head_info.index_version)

    def metric(self, name: str) -> MetricChange | None:
        return next((m for m in self.metrics if m.name == name), None)

    @cached_property
    def regressions(self) -> Changes:
        """Most severe first (``diff_questions.severity``), built when read."""
        return Changes(self.questions.columns, self.questions.columns.regressions())

    @cached_property
    def lost(self) -> int:
        """How many regressions lost their hit at k or failed."""
        return len(self.lost_changes)

    @cached_property
    def lost_changes(self) -> Changes:
        """The regressions that lost their hit at k or failed, most severe first."""
        regressions = self.regressions
        kinds = self.questions.columns.kind[regressions.order]
        return regressions.where((kinds == KIND_ORDER.index("error"))
                                 | (kinds == KIND_ORDER.index("lost")))

    @cached_property
    def improvements(self) -> Changes:
        return Changes(self.questions.columns, self.questions.columns.improvements())

    @cached_property
    def unchanged(self) -> Changes:
        return Changes(self.questions.columns, self.questions.columns.of_kinds(("same",)))

    @cached_property
    def moved(self) -> int:
        """How many compared questions changed in any way."""
        return len(self.questions) - len(self.unchanged)

    def fell_on(self, metric: str) -> Changes:
        """The compared questions whose ``metric`` went down (regressions are per metric)."""
        regressions = self.regressions
        return regressions.where(self.questions.columns.delta(metric, regressions.order) < 0)

    @cached_property
    def errors(self) -> tuple[QuestionResult, ...]:
        columns = self.head_questions.columns
        failed = sorted(columns.with_status("error"), key=columns.ids.__getitem__)
        return tuple(columns.record(i) for i in failed)

    @cached_property
    def head_measured(self) -> int:
        """How many of head's questions are measured."""
        return int(self.head_questions.columns.measured_mask().sum())

    def head_question(self, qid: str) -> QuestionResult | None:
        return self._head_by_id.get(qid)

    @cached_property
    def _head_by_id(self) -> ById:
        return ById(self.head_questions)


def _latency(base: Artefact | None, head: Artefact) -> tuple:
    stats = ("mean", "p50", "p95")
    pairs = [(stat, base.summary.latency(stat) if base else None, head.summary.latency(stat))
             for stat in stats]
    return tuple((stat, b, h) for stat, b, h in pairs if b is not None or h is not None)


def _history(head: Artefact) -> tuple:
    return tuple((e.sha, e.created_at, e.means) for e in head.history)


def _reason(goldset, compared, bq, hq, base_info, head_info) -> str | None:
    if len(compared) >= MIN_SHARED:
        return None
    stale, unmeasured = shared_unusable(bq, hq)
    return no_comparison_reason(goldset, len(compared), base_info, head_info, stale, unmeasured)


def _intp(at):
    """The compared questions' positions as numpy's index type."""
    return tuple(np.asarray(side, dtype=np.intp) for side in at)


def _changes(compared, base, head, at, k, on_both, paired) -> Changes:
    """The per-question changes as columns (``core/compare/change_columns``)."""
    return Changes(ChangeColumns(compared, base, head, *at, k, on_both, paired))


def _align(base: Artefact | None, head: Artefact, order):
    """The gold-set changes, the compared ids, why no comparison is possible, the stale
    changes and the compared questions' positions on each side (``order``: head's
    positions in id order when both sides hold the same ids in the same order, else
    None). The id -> position maps, made only when the two sides' ids differ, are dropped
    on return: at a million questions they are 140 MB the rest does not need."""
    hq = ById(head.questions)
    if base is None:
        return (GoldSetChanges(head_sha256=head.header.gold_sha256), (), None,
                stale_changes(None, hq), _intp(([], [])))
    bq = ById(base.questions)
    goldset, compared, at = partition(bq, hq, base.header, head.header, order)
    reason = _reason(goldset, compared, bq, hq, base.header, head.header)
    return goldset, compared, reason, stale_changes(bq, hq), _intp(at)


def _base_by_id(base: Artefact | None, head_questions: Questions, aligned: bool) -> Questions | tuple:
    """Base's questions in id order: head's order when both have the same ids in the same
    order (``aligned``), sorted otherwise; () without a base or without questions."""
    if base is None or not base.questions:
        return ()
    if aligned:
        return Questions(base.columns, head_questions.order, by_id=True)
    return sorted_by_id(base.questions)


def diff(base: Artefact | dict | None, head: Artefact | dict, *, seed: int | None = None,
         describe: bool = True) -> Diff:
    """Compare two run artefacts (``Artefact``, or dicts in the docs/artefact.md format, read by
    ``read_artefact``). Pure; inputs untouched. ``describe=False`` (the selftest's many
    simulated comparisons) skips what only a reader needs: intervals, minimum detectable
    changes and the per-tag tests; every gate decision is the same."""
    head = read_artefact(head)
    base = read_artefact(base) if base is not None else None
    head_info = head.header
    base_info = base.header if base is not None else None
    head_questions = sorted_by_id(head.questions)
    # decided once: two runs of one gold set hold the same ids in the same order
    aligned = base is not None and same_ids(base.columns, head.columns)
    base_questions = _base_by_id(base, head_questions, aligned)
    goldset, compared, reason, stale, at = _align(base, head, head_questions.order if aligned else None)
    on_both = tuple(m for m in head_info.metrics if base_info and m in base_info.metrics)
    paired = paired_values(compared, base, head, on_both, at)
    ties = noise_ties(compared, head_info, base_info)
    k = head_info.k
    on_base = base_questions if base is not None else None
    changes = _changes(compared, base, head, at, k, on_both, paired)
    return Diff(
        k=k, head_info=head_info, base_info=base_info,
        metrics=metric_changes(head_info.metrics, base_info.metrics if base_info else None,
                               paired, head, base, seed, ties, describe),
        compared=compared, questions=changes,
        tags=(tag_changes(head.columns.tags_at(at[1]), head.columns.tag_lists, paired, seed, ties)
              if describe else ()),
        goldset=goldset, stale=stale,
        config=config_diff(base.config, head.config) if base else (),
        latency=_latency(base, head), head_questions=head_questions,
        base_questions=base_questions,
        # with no answer verdict on head there is no matrix: not a record made to see that
        matrix=failure_matrix(on_base, head_questions if head.columns.answered else (), k,
                              compared, base_info.k if base_info else None),
        cutoff=analyse_cutoff(on_base, base_info.abstain_below if base_info else None,
                              head_questions, head_info.abstain_below),
        history=_history(head), no_comparison=reason,
        warnings=run_warnings(head_questions, head_info, reason),
        head_stages=head.stages, base_stages=base.stages if base is not None else None,
    )
