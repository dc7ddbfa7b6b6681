"""The action and the per-question gate: a pull request that loses two questions' gold chunks
fails the default gate; the label retrieval-change-intended, read from the pull request event
(or, in the workflow_run poster, from the pull request as GitHub reports it), or a committed
acceptance file accepts them; nothing a fork's artifact carries can. Real `ci-eval action`
processes against the loopback GitHub (tests/support/github_standin)."""

from __future__ import annotations

import json
import shutil

import pytest
from action_harness import (
    BASE,
    CONFIG,
    FORK,
    FORK_HEAD,
    FORK_PR,
    GOLD,
    TWO_HOURS,
    add_push_run,
    bodies,
    pr_event,
    run_action,
    verdict_line,
    workflow_run_event,
)
from github_standin import GitHubStandIn

from ci_eval.core.compare.acceptance import ACCEPT_LABEL, Acceptance, acceptances_toml
from ci_eval.github.artifact_zip import build_zip

# The PR's retriever ranks "gamma" past the depth for the questions that name it.
LOST = tuple(q["id"] for q in GOLD["questions"] if q["question"].startswith("gamma"))


def _label(name: str) -> dict:
    return {"id": 1, "node_id": "LA_1", "url": "https://api.github.com/label", "name": name,
            "description": None, "color": "0e8a16", "default": False}


def _event(*labels: str, **kw) -> dict:
    payload = pr_event(**kw)
    payload["pull_request"]["labels"] = [_label(name) for name in labels]
    return payload


@pytest.fixture(scope="module")
def pr_checkout(checkout, tmp_path_factory):
    """The PR's checkout: the same gold set and no [gate] table (the default gate), with a
    retriever change that loses the "gamma" questions."""
    root = tmp_path_factory.mktemp("pr-checkout")
    shutil.copytree(checkout / "eval", root / "eval")
    (root / "ci-eval.toml").write_text(
        CONFIG.format(gold="eval/gold.json", gate="").replace(
            'target = "fake_retrievers:lexical"',
            'target = "fake_retrievers:lexical_missing"\nparams = { miss = ["gamma"] }'))
    return root


def test_without_the_label_the_lost_questions_fail_and_are_named(gh, pr_checkout, tmp_path, base_zip):
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    job = run_action(gh, tmp_path, pr_checkout, "pull_request", _event("bug"))
    assert job.code == 1, job.stderr
    [body] = bodies(gh)
    assert verdict_line(body).startswith(f"### ❌ {len(LOST)} questions lost their gold chunk at k=1: ")
    assert all(f"`{q}`" in verdict_line(body) for q in LOST)
    assert f"or label the pull request `{ACCEPT_LABEL}`" in body
    assert job.outputs["verdict"] == "fail"


def test_the_label_on_the_pull_request_event_accepts_them(gh, pr_checkout, tmp_path, base_zip):
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    job = run_action(gh, tmp_path, pr_checkout, "pull_request", _event("docs", ACCEPT_LABEL))
    assert job.code == 0, job.stderr
    [body] = bodies(gh)
    assert verdict_line(body).startswith(f"### ✅ {len(LOST)} questions lost their gold chunk at k=1, both accepted: ")
    assert f"the pull request carries the label {ACCEPT_LABEL}" in body
    assert f"ci-eval: the pull request carries the label {ACCEPT_LABEL}" in job.stderr
    assert job.outputs["verdict"] == "pass"


def test_an_acceptance_committed_in_the_pull_request_passes_it(gh, pr_checkout, tmp_path, base_zip):
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    committed = tmp_path / "committed"
    shutil.copytree(pr_checkout, committed)
    (committed / "eval" / "accepted.toml").write_text(acceptances_toml(
        [Acceptance(q, "gamma", 1, None, "gamma moved to the glossary") for q in LOST]))
    job = run_action(gh, tmp_path, committed, "pull_request", _event())
    assert job.code == 0, job.stderr
    [body] = bodies(gh)
    assert f"Accepted ({len(LOST)}), from `eval/accepted.toml`:" in body
    assert body.count("gamma moved to the glossary") == len(LOST)


# -- the fork's pull request and the workflow_run poster --------------------------------------

@pytest.fixture(scope="module")
def fork_bundle(pr_checkout, base_zip, tmp_path_factory) -> dict:
    """A fork's pull_request job that loses the gamma questions, its event carrying the label
    (a fork cannot set labels; the poster must not believe the run): the bundle it uploads."""
    with GitHubStandIn("acme/rag-app") as server:
        server.refuse_writes()
        server.add_pull(FORK_PR, head_sha=FORK_HEAD, base_sha=BASE, head_repo=FORK)
        add_push_run(server, BASE, base_zip, TWO_HOURS)
        job = run_action(server, tmp_path_factory.mktemp("fork"), pr_checkout, "pull_request",
                         _event(ACCEPT_LABEL, number=FORK_PR, head_sha=FORK_HEAD, head_repo=FORK),
                         ref=f"refs/pull/{FORK_PR}/merge")
        server.assert_clean()
    return {p.name: p.read_bytes() for p in sorted(job.bundle.iterdir())}


def _post(gh, tmp_path, checkout, members: dict, labels=()):
    gh.add_pull(FORK_PR, head_sha=FORK_HEAD, base_sha=BASE, head_repo=FORK, labels=labels)
    run_id = gh.add_run(FORK_HEAD, head_branch="main", event="pull_request", head_repo=FORK,
                        conclusion="success")
    gh.add_artifact(run_id, build_zip(members))
    return run_action(gh, tmp_path, checkout, "workflow_run", workflow_run_event(run_id),
                      sha=BASE, ref="refs/heads/main", mode="comment")


def _forged(members: dict) -> dict:
    """The fork's bundle claiming acceptances as an artefact could: its pr.json names the
    label, its recorded config names an acceptance file (an unknown top-level key, such as a
    list of acceptances, is refused with the whole artifact: see the last test)."""
    forged = dict(members)
    pr = json.loads(forged["pr.json"])
    pr["labels"] = [ACCEPT_LABEL]
    forged["pr.json"] = json.dumps(pr).encode()
    head = json.loads(forged["ci-eval-run.json"])
    head["config"]["gate"] = {"accepted": "eval/accepted.toml"}
    forged["ci-eval-run.json"] = json.dumps(head).encode()
    return forged


def test_the_poster_ignores_acceptances_the_forks_artifact_claims(gh, fork_bundle, checkout, tmp_path, base_zip):
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    job = _post(gh, tmp_path, checkout, _forged(fork_bundle))
    assert job.code == 1, job.stderr
    [body] = bodies(gh, FORK_PR)
    assert verdict_line(body).startswith(f"### ❌ {len(LOST)} questions lost their gold chunk at k=1: ")
    assert "Accepted (" not in body and "both accepted" not in body


def test_the_poster_reads_the_label_from_the_pull_request_github_reports(gh, fork_bundle, checkout, tmp_path,
                                                                         base_zip):
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    job = _post(gh, tmp_path, checkout, fork_bundle, labels=(ACCEPT_LABEL,))
    assert job.code == 0, job.stderr
    [body] = bodies(gh, FORK_PR)
    assert verdict_line(body).startswith(f"### ✅ {len(LOST)} questions lost their gold chunk at k=1, both accepted: ")
    assert f"the pull request carries the label {ACCEPT_LABEL}" in body


def test_an_acceptance_file_in_the_forks_artifact_is_refused(gh, fork_bundle, checkout, tmp_path, base_zip):
    add_push_run(gh, BASE, base_zip, TWO_HOURS)
    members = {**fork_bundle, "accepted.toml": acceptances_toml(
        [Acceptance(q, "gamma", 1, None, "forged") for q in LOST]).encode()}
    job = _post(gh, tmp_path, checkout, members)
    assert job.code == 2, job.stderr
    assert bodies(gh, FORK_PR) == []
    assert "its artifact was refused" in job.stderr
