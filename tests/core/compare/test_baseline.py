"""Which run a pull request is compared against, as one table of situations."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ci_eval.core.compare.baseline import ArtifactInfo, RunInfo, age_text, choose_artifact, choose_baseline

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
REPO = "acme/rag-app"
BASE_SHA = "b" * 40


def run(
    run_id, sha, days_ago, branch="main", repo=REPO, event="push", conclusion="success"
) -> RunInfo:
    return RunInfo(
        id=run_id,
        head_sha=sha,
        head_branch=branch,
        head_repo=repo,
        event=event,
        conclusion=conclusion,
        created_at=NOW - timedelta(days=days_ago),
        html_url=f"https://github.com/{REPO}/actions/runs/{run_id}",
    )


EXACT = run(1, BASE_SHA, 3)
NEWER_ON_MAIN = run(2, "c" * 40, 1)
OLDER_ON_MAIN = run(3, "d" * 40, 5)
FORK_NAMED_MAIN = run(4, BASE_SHA, 0, repo="someone/rag-app")
FORK_NEWEST = run(5, "e" * 40, 0, repo="someone/rag-app")
FAILED = run(6, BASE_SHA, 2, conclusion="failure")
PR_RUN = run(7, BASE_SHA, 2, branch="feature", event="pull_request")
OTHER_BRANCH = run(8, "f" * 40, 0, branch="release")
DELETED_REPO = run(9, "a" * 40, 0, repo=None)


@pytest.mark.parametrize(
    ("case", "runs", "skip", "kind", "run_id", "reason"),
    [
        (
            "exact base commit",
            [NEWER_ON_MAIN, EXACT, OLDER_ON_MAIN],
            (),
            "exact",
            1,
            "baseline: the push run of base commit bbbbbbb on main (3 days old)",
        ),
        (
            "base never evaluated: newest run on main",
            [OLDER_ON_MAIN, NEWER_ON_MAIN],
            (),
            "fallback",
            2,
            (
                "fallback baseline: base commit bbbbbbb was never evaluated by a push run, so the "
                "newest push run on main is used instead: ccccccc, 1 day old"
            ),
        ),
        (
            "exact run's artefact expired: next newest",
            [EXACT, NEWER_ON_MAIN, OLDER_ON_MAIN],
            (1,),
            "fallback",
            2,
            (
                "fallback baseline: base commit bbbbbbb has no run with an unexpired artefact, so "
                "the newest push run on main is used instead: ccccccc, 1 day old"
            ),
        ),
        (
            "expired runs are skipped in order",
            [EXACT, NEWER_ON_MAIN, OLDER_ON_MAIN],
            (1, 2),
            "fallback",
            3,
            (
                "fallback baseline: base commit bbbbbbb has no run with an unexpired artefact, so "
                "the newest push run on main is used instead: ddddddd, 5 days old"
            ),
        ),
        (
            "a fork's run on a branch named like the base is never used",
            [FORK_NAMED_MAIN, FORK_NEWEST, OLDER_ON_MAIN],
            (),
            "fallback",
            3,
            None,
        ),
        (
            "failed, pull_request and other-branch runs are ignored",
            [FAILED, PR_RUN, OTHER_BRANCH, OLDER_ON_MAIN],
            (),
            "fallback",
            3,
            None,
        ),
        (
            "first run: nothing at all",
            [],
            (),
            "none",
            None,
            (
                "no baseline: no successful push run of this workflow on main was found; this is the "
                "first run or main was never evaluated"
            ),
        ),
        (
            "only forks' runs",
            [FORK_NAMED_MAIN, FORK_NEWEST, DELETED_REPO],
            (),
            "none",
            None,
            (
                "no baseline: no successful push run of this workflow on main was found; this is the "
                "first run or main was never evaluated (ignored runs from other repositories: "
                "a deleted repository, someone/rag-app)"
            ),
        ),
        (
            "every artefact expired",
            [EXACT, OLDER_ON_MAIN],
            (1, 3),
            "none",
            None,
            (
                "no baseline: no push run of this workflow on main has an unexpired artefact (2 "
                "checked); this is the first run or the artefacts expired"
            ),
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and " " in value else "",
)
def test_choose_baseline(case, runs, skip, kind, run_id, reason):
    choice = choose_baseline(runs, BASE_SHA, REPO, "main", NOW, skip_run_ids=skip)
    assert choice.kind == kind
    assert (choice.run.id if choice.run else None) == run_id
    if reason is not None:
        assert choice.reason == reason
    assert "\n" not in choice.reason


def test_exact_match_prefers_the_newest_of_several_runs_of_the_base_commit():
    rerun = run(10, BASE_SHA, 1)
    assert choose_baseline([EXACT, rerun], BASE_SHA, REPO, "main", NOW).run == rerun


def test_repository_names_compare_case_insensitively():
    choice = choose_baseline([EXACT], BASE_SHA, "ACME/Rag-App", "main", NOW)
    assert choice.kind == "exact"


def test_runs_are_not_mutated_or_reordered():
    runs = [OLDER_ON_MAIN, EXACT]
    choose_baseline(runs, BASE_SHA, REPO, "main", NOW)
    assert runs == [OLDER_ON_MAIN, EXACT]


def artifact(artifact_id, name="ci-eval", expired=False, hours=0) -> ArtifactInfo:
    return ArtifactInfo(artifact_id, name, expired, 1234, NOW - timedelta(hours=hours))


@pytest.mark.parametrize(
    ("artifacts", "expected"),
    [
        ([artifact(1)], 1),
        ([artifact(1, expired=True)], None),
        ([artifact(1, expired=True), artifact(2)], 2),
        ([artifact(1, name="coverage")], None),
        ([artifact(1, hours=5), artifact(2, hours=1)], 2),  # a re-run uploaded again: newest
        ([], None),
    ],
)
def test_choose_artifact(artifacts, expected):
    chosen = choose_artifact(artifacts, "ci-eval")
    assert (chosen.id if chosen else None) == expected


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(minutes=5), "less than an hour old"),
        (timedelta(hours=1), "1 hour old"),
        (timedelta(hours=23), "23 hours old"),
        (timedelta(days=1), "1 day old"),
        (timedelta(days=40), "40 days old"),
        (timedelta(hours=-2), "less than an hour old"),  # clock skew never gives a negative age
    ],
)
def test_age_text(delta, text):
    assert age_text(NOW - delta, NOW) == text


def test_every_baseline_the_code_names_is_in_the_one_vocabulary():
    import re
    from typing import get_args

    from suite_paths import PACKAGE as package

    from ci_eval.core.compare.baseline import BaselineKind

    named = {m for path in package.rglob("*.py")
             for m in re.findall(r'BaselineInfo\(\s*kind="(\w+)"', path.read_text(encoding="utf-8"))}
    assert named and named <= set(get_args(BaselineKind))
    # the demo compares with its own baseline configuration: "builtin", as the action's demo says
    demo = (package / "commands" / "demo.py").read_text(encoding="utf-8")
    assert 'BaselineInfo(kind="builtin"' in demo
