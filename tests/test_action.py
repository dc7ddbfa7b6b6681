"""`ci-eval action` end to end: a real process with a real event payload, real
GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, a small project whose retriever is a Python
callable, and the loopback GitHub of github_standin.py (which validates every request and
response against GitHub's OpenAPI description). Baselines are real artefacts, zipped the way
upload-artifact zips them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from github_standin import GitHubStandIn, fake_sha

from ci_eval.artifact_zip import build_zip

TESTS = Path(__file__).resolve().parent
REPO_ROOT = TESTS.parent
REPO = "acme/rag-app"
FORK = "someone/rag-app"
PREFIX = f"/repos/{REPO}"
MARKER = "<!-- ci-eval:report -->"
WORKFLOW_REF = f"{REPO}/.github/workflows/ci-eval.yml@refs/heads/main"
RUNS_PATH = f"{PREFIX}/actions/workflows/ci-eval.yml/runs"
BASE = fake_sha("base")
HEAD = fake_sha("head")
MERGE = fake_sha("merge")
OLDER = fake_sha("older")
PR = 7

GOLD = {
    "schema_version": 1,
    "index_version": "idx-2",
    "questions": [
        {"id": "q1", "question": "alpha please", "gold": ["alpha"], "tags": ["greek"]},
        {"id": "q2", "question": "beta please", "gold": {"beta": 2, "retired": 1}},
        {"id": "q3", "question": "gamma please", "gold": ["gamma"], "tags": ["greek"]},
        {"id": "q4", "question": "nothing about omega", "gold": [], "unanswerable": True},
    ],
}
CONFIG = """gold_set = "{gold}"
k = 1
abstain_below = 0.9
{extra}
[retriever]
type = "python"
target = "fake_retrievers:lexical"

[index]
callable = "fake_retrievers:manifest"
"""


# -- the project, its baseline and the environment of one job ------------------------------


def _clean_environ() -> dict[str, str]:
    """This process's environment without anything a CI runner may have set for itself."""
    drop = ("GITHUB_", "INPUT_", "RUNNER_", "CI_EVAL_", "ACTIONS_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env.pop(proxy, None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(REPO_ROOT)])
    return env


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The checkout: a gold set (one id missing from the index), a passing config and a
    strict one whose floor fails, plus a gold set the lexical retriever half misses."""
    root = tmp_path_factory.mktemp("checkout")
    (root / "eval").mkdir()
    (root / "eval" / "gold.json").write_text(json.dumps(GOLD, indent=2) + "\n")
    strict_gold = dict(GOLD, questions=[*GOLD["questions"],
                                        {"id": "q5", "question": "zeta please", "gold": ["gamma"]}])
    (root / "eval" / "strict-gold.json").write_text(json.dumps(strict_gold, indent=2) + "\n")
    (root / "ci-eval.toml").write_text(CONFIG.format(gold="eval/gold.json", extra=""))
    (root / "strict.toml").write_text(
        CONFIG.format(gold="eval/strict-gold.json", extra='[gate]\nmin = { "hit@1" = 0.9 }\n'))
    return root


@pytest.fixture(scope="module")
def base_zip(project, tmp_path_factory) -> bytes:
    """The artifact a push run of the base branch left: `ci-eval run`, zipped."""
    out = tmp_path_factory.mktemp("base") / "ci-eval-run.json"
    env = {**_clean_environ(), "GITHUB_SHA": BASE, "GITHUB_REF": "refs/heads/main"}
    done = subprocess.run(
        [sys.executable, "-m", "ci_eval", "run", "--config", "ci-eval.toml", "--out", str(out),
         "--quiet"], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["git"]["sha"] == BASE
    return build_zip({"ci-eval-run.json": out.read_bytes()})


@pytest.fixture
def gh():
    with GitHubStandIn(REPOSITORY_DEFAULT := REPO) as server:  # noqa: F841
        server.add_pull(PR, head_sha=HEAD, base_sha=BASE)
        yield server
        # Every request the action made and every answer it got matched GitHub's description.
        server.assert_clean()


def pr_event(number=PR, head_sha=HEAD, base_sha=BASE, head_repo=REPO, base_ref="main",
             head_ref="feature") -> dict:
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"sha": head_sha, "ref": head_ref, "repo": {"full_name": head_repo}},
            "base": {"sha": base_sha, "ref": base_ref, "repo": {"full_name": REPO}},
        },
        "repository": {"full_name": REPO, "default_branch": "main"},
    }


def push_event(sha: str) -> dict:
    return {"ref": "refs/heads/main", "after": sha,
            "repository": {"full_name": REPO, "default_branch": "main"}}


def workflow_run_event(run_id: int, head_sha: str, head_repo: str = FORK) -> dict:
    return {"action": "completed",
            "workflow_run": {"id": run_id, "head_sha": head_sha, "event": "pull_request",
                             "head_repository": {"full_name": head_repo}},
            "repository": {"full_name": REPO, "default_branch": "main"}}


@dataclass
class Job:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    out_dir: Path


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: ``name<<DELIM`` / value lines / ``DELIM``."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i]:
            i += 1
            continue
        name, sep, delimiter = lines[i].partition("<<")
        assert sep and delimiter, f"not a heredoc output line: {lines[i]!r}"
        end = lines.index(delimiter, i + 1)
        outputs[name] = "\n".join(lines[i + 1:end])
        i = end + 1
    return outputs


def run_action(gh: GitHubStandIn, tmp_path: Path, cwd: Path, event_name: str, payload: dict | None,
               config: str = "ci-eval.toml", sha: str = MERGE, ref: str = f"refs/pull/{PR}/merge",
               **inputs: str) -> Job:
    """One `ci-eval action` step. ``inputs`` are action inputs (``comment="off"``)."""
    job = tmp_path / f"job-{len(list(tmp_path.glob('job-*')))}"
    job.mkdir()
    env = _clean_environ()
    if payload is not None:
        (job / "event.json").write_text(json.dumps(payload))
        env["GITHUB_EVENT_PATH"] = str(job / "event.json")
    (job / "output").touch()
    (job / "summary.md").touch()
    (job / "temp").mkdir()
    env.update({
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": gh.api_url,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_SHA": sha,
        "GITHUB_REF": ref,
        "GITHUB_WORKFLOW_REF": WORKFLOW_REF,
        "GITHUB_RUN_ID": "990001",
        "GITHUB_OUTPUT": str(job / "output"),
        "GITHUB_STEP_SUMMARY": str(job / "summary.md"),
        "RUNNER_TEMP": str(job / "temp"),
        "INPUT_GITHUB-TOKEN": gh.token,
        "INPUT_CONFIG": config,
        "CI_EVAL_RETRY_BACKOFF": "0.01",
    })
    for name, value in inputs.items():
        env["INPUT_" + name.upper().replace("_", "-")] = value
    done = subprocess.run([sys.executable, "-m", "ci_eval", "action"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    # The token reaches the log only in the line that tells the runner to mask it.
    leaks = [line for line in (done.stdout + done.stderr).splitlines() if gh.token in line]
    assert leaks in ([], [f"::add-mask::{gh.token}"]), leaks
    assert gh.token not in done.stderr
    return Job(done.returncode, done.stdout, done.stderr,
               parse_outputs((job / "output").read_text()), (job / "summary.md").read_text(),
               job / "temp" / "ci-eval")


def calls(gh: GitHubStandIn) -> list[tuple[str, str]]:
    """The API requests, in order, with the repository prefix cut off."""
    return [(r.method, r.path.removeprefix(PREFIX)) for r in gh.requests]


def comment_bodies(gh: GitHubStandIn, number: int = PR) -> list[str]:
    return [c["body"] for c in gh.comments_on(number)]


def baseline_line(body: str) -> str:
    return next(line for line in body.splitlines() if line.startswith("**Baseline:**"))


def add_push_run(gh: GitHubStandIn, sha: str, artifact: bytes | None, age: timedelta,
                 **run_options) -> tuple[int, int | None]:
    created = datetime.now(timezone.utc) - age
    run_id = gh.add_run(sha, created_at=created, **run_options)
    artifact_id = gh.add_artifact(run_id, artifact) if artifact is not None else None
    return run_id, artifact_id


# -- pull_request: the baseline ------------------------------------------------------------


def test_first_run_says_plainly_there_is_no_baseline(gh, project, tmp_path):
    job = run_action(gh, tmp_path, project, "pull_request", pr_event())

    assert job.code == 0, job.stderr
    print(job.stdout, job.stderr, calls(gh))
    [body] = comment_bodies(gh)
    print(body)
    assert 0
