"""What one rendering of a comparison needs: the diff, the gate's result, where the
baseline and the gate's rules came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ci_eval.core.report.markdown import FULL_REPORT

if TYPE_CHECKING:  # annotations only: rendering a comment needs none of these modules' code
    from ci_eval.core.compare.baseline import BaselineKind
    from ci_eval.core.compare.diff import Diff
    from ci_eval.core.compare.gate import GateResult
    from ci_eval.core.compare.judged import JudgedReport
    from ci_eval.core.compare.recent_runs import RecentRuns


@dataclass(frozen=True)
class BaselineInfo:
    """Where the base artefact came from, as the caller found it.

    ``kind``: ``exact`` (the PR's base commit), ``fallback`` (another run of the base
    branch), ``builtin`` (the demo's own baseline), ``file`` (an artefact given on the
    command line, ``path`` names it) or ``none``. ``description`` is the caller's sentence
    (it names the commit, its age and why); without it the line is built from ``sha``,
    ``age`` and ``reason``. ``url`` links the run the baseline came from (https only).
    """

    kind: BaselineKind = "file"
    description: str | None = None
    url: str | None = None
    sha: str | None = None
    age: str | None = None  # "2 days old"
    reason: str | None = None  # "base commit abc1234 was never evaluated"
    path: str | None = None  # the base artefact's file, for kind "file"

    def as_dict(self) -> dict:
        return {"kind": self.kind, "description": self.description, "url": self.url,
                "sha": self.sha, "age": self.age, "reason": self.reason, "path": self.path}


@dataclass(frozen=True)
class ReportContext:
    diff: Diff
    gate: GateResult
    baseline: BaselineInfo
    marker_suffix: str = ""
    title: str = ""  # optional: the gold set's name, shown after the verdict
    judged: JudgedReport | None = None  # judged@k and the unjudged results the head brought
    gate_source: str = ""  # how the rules came: "the default rule (no config found)", ...
    gate_path: str | None = None  # the config file the rules came from
    # Where the whole report is, named by each list the budget cuts (core/report/markdown.py)
    full_report: str = FULL_REPORT
    # The base branch's recent runs, question by question (core/compare/recent_runs.py), and
    # the branch's name: what the regressions' notes and the trend's tag lines are read from
    recent: RecentRuns | None = None
    base_branch: str = ""
    head_path: str = ""  # the head's run artefact as it was given (what `ci-eval label --pool` reads)

    @property
    def branch_name(self) -> str:
        """The base branch as the comment names it."""
        return self.base_branch or "the base branch"
