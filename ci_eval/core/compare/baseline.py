"""Which stored run to compare a pull request against.

The baseline is the artefact of this same workflow's successful ``push`` run whose head SHA
is the PR's base SHA ("exact"). Failing that, the newest such run on the base branch
("fallback"), and the comment says which commit it is and how old. A run made in another
repository (a fork pushing a branch named like the base) is never a baseline. When nothing
qualifies the answer is "none", with a sentence saying why: passing in silence is the bug
users of other tools complain about most.

Artefacts expire. The caller asks :func:`choose_baseline`, lists that run's artifacts, picks
one with :func:`choose_artifact`, and when there is none (expired, deleted, gone) asks again
with the run's id in ``skip_run_ids``; the final reason then counts the runs it skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

# Where a baseline came from, one vocabulary for the lookup, the action and the report:
# the PR's base commit, another run of the base branch, the demo's own baseline, a file
# given on the command line, or none at all.
# "outage": GitHub failed while the baseline was looked up (the action exits 5, never passes)
BaselineKind = Literal["exact", "fallback", "builtin", "file", "none", "outage"]
Kind = Literal["exact", "fallback", "none"]  # what the lookup itself can find


@dataclass(frozen=True)
class RunInfo:
    """One workflow run, as the GitHub adapter reports it."""

    id: int
    head_sha: str
    head_branch: str | None
    head_repo: str | None  # "owner/name" of the repository the run's commit came from
    event: str
    conclusion: str | None
    created_at: datetime
    html_url: str
    pull_requests: tuple[int, ...] = ()


@dataclass(frozen=True)
class ArtifactInfo:
    """One workflow artifact (a zip stored by actions/upload-artifact)."""

    id: int
    name: str
    expired: bool
    size_in_bytes: int
    created_at: datetime | None


@dataclass(frozen=True)
class BaselineChoice:
    kind: Kind
    run: RunInfo | None
    reason: str  # a plain sentence, shown in the comment's provenance line


def _short(sha: str) -> str:
    return sha[:7]


def age_text(then: datetime, now: datetime) -> str:
    """``"3 days old"``, ``"5 hours old"``, ``"less than an hour old"``."""
    seconds = max((now - then).total_seconds(), 0.0)
    days = int(seconds // 86400)
    if days >= 1:
        return f"{days} day{'s' if days != 1 else ''} old"
    hours = int(seconds // 3600)
    if hours >= 1:
        return f"{hours} hour{'s' if hours != 1 else ''} old"
    return "less than an hour old"


def _is_usable_push_run(run: RunInfo, base_repo: str) -> bool:
    return (
        run.event == "push"
        and run.conclusion == "success"
        and run.head_repo is not None
        and run.head_repo.lower() == base_repo.lower()
    )


def baseline_candidates(
    runs: Iterable[RunInfo], base_sha: str, base_repo: str, base_branch: str
) -> tuple[tuple[Kind, RunInfo], ...]:
    """Every run that may serve as the baseline, best first.

    Exact-SHA runs come first, then the base branch's other runs, newest first by
    ``created_at`` (ties: higher run id first). Runs whose ``head_repo`` is not the base
    repository are dropped whatever their branch is called.
    """
    usable = [r for r in runs if _is_usable_push_run(r, base_repo)]
    newest_first = sorted(usable, key=lambda r: (r.created_at, r.id), reverse=True)
    exact = [r for r in newest_first if r.head_sha == base_sha]
    fallback = [r for r in newest_first if r.head_sha != base_sha and r.head_branch == base_branch]
    return tuple([("exact", r) for r in exact] + [("fallback", r) for r in fallback])


def choose_baseline(
    runs: Sequence[RunInfo],
    base_sha: str,
    base_repo: str,
    base_branch: str,
    now: datetime,
    skip_run_ids: Iterable[int] = (),
) -> BaselineChoice:
    """Pick the baseline run, or say plainly why there is none.

    ``runs`` are this workflow's runs as listed by the API (any event, any repository);
    ``skip_run_ids`` are runs already tried whose artefact turned out to be missing,
    expired or gone.
    """
    skipped = set(skip_run_ids)
    candidates = baseline_candidates(runs, base_sha, base_repo, base_branch)
    for kind, run in candidates:
        if run.id in skipped:
            continue
        if kind == "exact":
            reason = (
                f"baseline: the push run of base commit {_short(base_sha)} on {base_branch} "
                f"({age_text(run.created_at, now)})"
            )
        else:
            why = (
                "has no run with an unexpired artefact"
                if any(k == "exact" for k, _ in candidates)
                else "was never evaluated by a push run"
            )
            reason = (
                f"fallback baseline: base commit {_short(base_sha)} {why}, so the newest push "
                f"run on {base_branch} is used instead: {_short(run.head_sha)}, "
                f"{age_text(run.created_at, now)}"
            )
        return BaselineChoice(kind, run, reason)

    foreign = sorted(
        {
            r.head_repo or "a deleted repository"
            for r in runs
            if r.event == "push" and (r.head_repo or "").lower() != base_repo.lower()
        }
    )
    note = f" (ignored runs from other repositories: {', '.join(foreign)})" if foreign else ""
    if candidates:
        reason = (
            f"no baseline: no push run of this workflow on {base_branch} has an unexpired "
            f"artefact ({len(candidates)} checked); this is the first run or the artefacts "
            f"expired{note}"
        )
    else:
        reason = (
            f"no baseline: no successful push run of this workflow on {base_branch} was "
            f"found; this is the first run or {base_branch} was never evaluated{note}"
        )
    return BaselineChoice("none", None, reason)


def choose_artifact(artifacts: Iterable[ArtifactInfo], name: str) -> ArtifactInfo | None:
    """The newest unexpired artifact called ``name``; None when there is none."""
    live = [a for a in artifacts if a.name == name and not a.expired]
    if not live:
        return None
    return max(live, key=lambda a: (a.created_at is not None, a.created_at or 0, a.id))
