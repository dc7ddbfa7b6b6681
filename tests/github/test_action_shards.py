"""The action's sharded setup end to end: matrix jobs (`shard: I/N`) write their parts, the
parts reach the loopback GitHub as real zips, and the `mode: merge` job lists this run's
artifacts, downloads and merges them, then compares, comments and gates as `mode: run` does.
A missing shard fails the merge job, names the shard and posts nothing."""

from __future__ import annotations

from action_harness import (
    BASE,
    GOLD,
    HEAD,
    PR,
    PREFIX,
    REPO,
    TWO_HOURS,
    add_push_run,
    bodies,
    pr_event,
    push_event,
    run_action,
)
from github_standin import GitHubStandIn
from run_files import read_run
from shard_helpers import without_times

from ci_eval.github.artifact_zip import build_zip

RUN_ID = 990001  # GITHUB_RUN_ID of every job run_action starts: the one workflow run
COUNT = 3


def shard_jobs(gh, tmp_path, checkout, count=COUNT, upload=None):
    """The matrix: one job per shard; each part is uploaded as upload-artifact would."""
    gh.add_run(HEAD, head_branch="feature", event="pull_request", conclusion=None, run_id=RUN_ID,
               pull_requests=(PR,))
    jobs = []
    for i in range(1, count + 1):
        job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), shard=f"{i}/{count}")
        assert job.code == 0, job.stderr
        jobs.append(job)
        if upload is None or i in upload:
            part = (job.bundle / "ci-eval-run.json").read_bytes()
            gh.add_artifact(RUN_ID, build_zip({"ci-eval-run.json": part}), name=job.outputs["part-name"])
    return jobs


def without_latency(markdown: str) -> str:
    return "\n".join(line for line in markdown.splitlines() if not line.startswith("Latency (ms):"))


def test_the_merge_job_posts_what_an_unsharded_run_posts(gh, checkout, tmp_path, base_zip):
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    jobs = shard_jobs(gh, tmp_path, checkout)
    # A matrix job measures and uploads; it asks GitHub nothing and posts nothing.
    assert gh.requests == []
    assert [j.outputs["part-name"] for j in jobs] == [f"ci-eval-part-{i}-of-{COUNT}" for i in (1, 2, 3)]
    assert all(sorted(p.name for p in j.bundle.iterdir()) == ["ci-eval-run.json"] for j in jobs)

    merged = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), mode="merge")

    assert merged.code == 0, merged.stderr
    requests = [(r.method, r.path.removeprefix(PREFIX)) for r in gh.requests]
    assert ("GET", f"/actions/runs/{RUN_ID}/artifacts") in requests
    parts = gh.artifacts_of(RUN_ID)
    # Every part was fetched as a zip from the blob host (the token never went there).
    assert {f"/artifacts/{a['id']}/ci-eval.zip" for a in parts} <= {b.path for b in gh.blob_requests}
    [body] = bodies(gh)

    # The same pull request measured by one unsharded job, against its own loopback GitHub.
    with GitHubStandIn(REPO) as alone:
        alone.add_pull(PR, head_sha=HEAD, base_sha=BASE)
        add_push_run(alone, BASE, base_zip, TWO_HOURS)
        single = run_action(alone, tmp_path, checkout, "pull_request", pr_event())
        [single_body] = bodies(alone)
        alone.assert_clean()
    assert single.code == 0, single.stderr
    assert without_latency(body) == without_latency(single_body)
    drop = ("comment-url", "artefact")
    assert {k: v for k, v in merged.outputs.items() if k not in drop} == {
        k: v for k, v in single.outputs.items() if k not in drop}
    head = read_run(merged.bundle / "ci-eval-run.json")
    alone_head = read_run(single.bundle / "ci-eval-run.json")
    assert without_times(head) == without_times(alone_head) and "shard" not in head
    assert sorted(p.name for p in merged.bundle.iterdir()) == sorted(p.name for p in single.bundle.iterdir())


def test_a_missing_shard_fails_the_merge_job_names_it_and_posts_nothing(gh, checkout, tmp_path, base_zip):
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    shard_jobs(gh, tmp_path, checkout, upload={1, 3})

    merged = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), mode="merge")

    assert merged.code == 2
    assert f"shard 2/{COUNT} is missing" in merged.stderr
    assert f"ci-eval-part-1-of-{COUNT}" in merged.stderr and f"ci-eval-part-3-of-{COUNT}" in merged.stderr
    assert bodies(gh) == [] and not gh.calls("issues/create-comment")
    assert "verdict" not in merged.outputs and not merged.bundle.exists()


def test_a_merge_job_with_no_parts_says_how_to_make_them(gh, checkout, tmp_path):
    gh.add_run(HEAD, head_branch="feature", event="pull_request", conclusion=None, run_id=RUN_ID)
    merged = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), mode="merge", comment="off")
    assert merged.code == 2 and bodies(gh) == []
    assert merged.stderr.strip().splitlines()[-1] == (
        f"ci-eval: error: input mode: run {RUN_ID} has no part artifacts (ci-eval-part-I-of-N); the "
        "matrix jobs upload them when given the shard input")


def test_a_corrupt_part_zip_is_refused_naming_the_artifact(gh, checkout, tmp_path):
    gh.add_run(HEAD, head_branch="feature", event="pull_request", conclusion=None, run_id=RUN_ID)
    artifact = gh.add_artifact(RUN_ID, b"PK\x03\x04 not really a zip", name="ci-eval-part-1-of-1")
    merged = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), mode="merge")
    assert merged.code == 2 and bodies(gh) == []
    assert f"ci-eval: error: artifact ci-eval-part-1-of-1 (id {artifact}): not a valid zip archive" in merged.stderr


def test_the_shard_input_is_refused_outside_mode_run(gh, checkout, tmp_path):
    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), shard="1/2", mode="merge")
    assert job.code == 2 and gh.requests == []
    assert job.stderr.strip().splitlines()[-1] == (
        "ci-eval: error: GITHUB_EVENT_NAME: the shard input belongs to the matrix jobs (mode: run), "
        "not mode 'merge'")


def test_a_bad_shard_input_is_one_line(gh, checkout, tmp_path):
    job = run_action(gh, tmp_path, checkout, "pull_request", pr_event(), shard="4/3")
    assert job.code == 2 and gh.requests == [] and bodies(gh) == []
    assert job.stderr.strip().splitlines()[-1] == "ci-eval: error: input shard: the shard index must be 1 to 3, got 4"


def test_a_push_merge_job_writes_the_baseline_bundle(gh, checkout, tmp_path):
    gh.add_run(BASE, head_branch="main", event="push", conclusion=None, run_id=RUN_ID)
    for i in (1, 2):
        job = run_action(gh, tmp_path, checkout, "push", push_event(BASE), sha=BASE, ref="refs/heads/main",
                         shard=f"{i}/2")
        gh.add_artifact(RUN_ID, build_zip({"ci-eval-run.json": (job.bundle / "ci-eval-run.json").read_bytes()}),
                        name=job.outputs["part-name"])
    merged = run_action(gh, tmp_path, checkout, "push", push_event(BASE), sha=BASE, ref="refs/heads/main",
                        mode="merge")
    assert merged.code == 0, merged.stderr
    head = read_run(merged.bundle / "ci-eval-run.json")
    assert head["git"]["sha"] == BASE and head["git"]["ref"] == "refs/heads/main"
    assert len(head["questions"]) == len(GOLD["questions"]) and bodies(gh) == []
