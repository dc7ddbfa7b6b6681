"""One `ci-eval action` job as a real process, for the action's tests: the repository and
commits they share, the project the job checks out, event payloads, the job's environment and
what a job leaves behind (exit code, log, GITHUB_OUTPUT, step summary, the uploaded bundle)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from action_steps import context_for, input_values, run_step
from github_standin import GitHubStandIn, fake_sha
from suite_paths import REPO_ROOT, SUPPORT

from ci_eval.github.artifact_zip import build_zip

REPO = "acme/rag-app"
FORK = "someone/rag-app"
PREFIX = f"/repos/{REPO}"
MARKER = "<!-- ci-eval:report -->"
WORKFLOW_REF = f"{REPO}/.github/workflows/ci-eval.yml@refs/heads/main"
RUNS = "/actions/workflows/ci-eval.yml/runs"
COMMENTS = "/issues/7/comments"
BASE = fake_sha("base")  # the PR's base commit
HEAD = fake_sha("head")  # the PR's head commit
MERGE = fake_sha("merge")  # GITHUB_SHA of a pull_request job: a merge commit nobody knows
OLDER = fake_sha("older")  # an older commit of main
NEWER = fake_sha("newer")  # a newer commit of main, not the PR's base
PR = 7
FORK_PR = 8
FORK_HEAD = fake_sha("fork-head")
TWO_HOURS = timedelta(hours=2, minutes=10)
THREE_DAYS = timedelta(days=3, hours=1)

GOLD = {
    "schema_version": 1,
    "index_version": "idx-2",
    "questions": [
        {"id": "q1", "question": "alpha please", "gold": ["alpha"], "tags": ["greek"]},
        # "retired" is not in the index (fake_retrievers.manifest): a stale gold id.
        {"id": "q2", "question": "beta please", "gold": {"beta": 2, "retired": 1}},
        {"id": "q3", "question": "gamma please", "gold": ["gamma"], "tags": ["greek"]},
        {"id": "q4", "question": "nothing about omega", "gold": [], "unanswerable": True},
        # enough comparable questions for a comparison (core/compare/diff_goldset.py MIN_SHARED)
        {"id": "q6", "question": "delta please", "gold": ["delta"]},
        {"id": "q7", "question": "epsilon please", "gold": ["epsilon"]},
        {"id": "q8", "question": "alpha again", "gold": ["alpha"]},
        {"id": "q9", "question": "gamma again", "gold": ["gamma"], "tags": ["greek"]},
    ],
}
# The lexical retriever answers "zeta" with alpha: a miss, so hit@1 is 3/4 under this gold set.
STRICT_GOLD = dict(
    GOLD, questions=[*GOLD["questions"], {"id": "q5", "question": "zeta please", "gold": ["gamma"]}]
)
ANSWERABLE = [q for q in GOLD["questions"] if not q.get("unanswerable")]
# Compared with a baseline: answerable, and no gold id missing from the index ("retired").
COMPARED = [q for q in ANSWERABLE if "retired" not in q["gold"]]
# Under the strict gold set the one "zeta" question misses: hit@1 over its answerable ones.
STRICT_HIT = (len(ANSWERABLE) + 1 - 1) / (len(ANSWERABLE) + 1)
CONFIG = """gold_set = "{gold}"
k = 1
abstain_below = 0.9
{gate}
[retriever]
type = "python"
target = "fake_retrievers:lexical"

[index]
callable = "fake_retrievers:manifest"
"""


# -- the checkout, the baseline and one job's environment ----------------------------------


def clean_environ() -> dict[str, str]:
    """This process's environment without what a CI runner set for its own job."""
    drop = ("GITHUB_", "INPUT_", "RUNNER_", "CI_EVAL_", "ACTIONS_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(proxy, None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    # The retriever (fake_retrievers) and this checkout's ci_eval, as a job would find them.
    env["PYTHONPATH"] = os.pathsep.join([str(SUPPORT), str(REPO_ROOT)])
    return env


def artefact_with_sha(artefact: bytes, sha: str) -> bytes:
    data = json.loads(artefact)
    data["git"]["sha"] = sha
    return json.dumps(data, sort_keys=True).encode()


def pr_event(number=PR, head_sha=HEAD, base_sha=BASE, head_repo=REPO) -> dict:
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"sha": head_sha, "ref": "feature", "repo": {"full_name": head_repo}},
            "base": {"sha": base_sha, "ref": "main", "repo": {"full_name": REPO}},
        },
        "repository": {"full_name": REPO, "default_branch": "main"},
    }


def push_event(sha: str) -> dict:
    return {"ref": "refs/heads/main", "after": sha, "before": OLDER,
            "repository": {"full_name": REPO, "default_branch": "main"}}


def workflow_run_event(run_id: int, head_sha: str = FORK_HEAD) -> dict:
    return {
        "action": "completed",
        "workflow_run": {"id": run_id, "head_sha": head_sha, "event": "pull_request",
                         "path": ".github/workflows/ci-eval.yml",
                         "head_repository": {"full_name": FORK}},
        "repository": {"full_name": REPO, "default_branch": "main"},
    }


@dataclass
class Job:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    bundle: Path  # what upload-artifact uploads: RUNNER_TEMP/ci-eval
    gate: subprocess.CompletedProcess  # action.yml's Gate step, run after the job: its exit is the job's colour

    def bundle_zip(self) -> bytes:
        return build_zip({p.name: p.read_bytes() for p in sorted(self.bundle.iterdir())})

    def annotations(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith("::warning")]


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: ``name<<DELIM``, the value's lines, ``DELIM``;
    or one ``name=value`` line (the Run step's exit code)."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i] and "<<" not in lines[i] and "=" in lines[i]:
            name, _, value = lines[i].partition("=")
            assert name not in outputs, f"output {name} set twice"
            outputs[name] = value
        elif lines[i]:
            name, sep, delimiter = lines[i].partition("<<")
            assert sep and delimiter, f"not a multiline output: {lines[i]!r}"
            end = lines.index(delimiter, i + 1)
            assert name not in outputs, f"output {name} set twice"
            outputs[name] = "\n".join(lines[i + 1:end])
            i = end
        i += 1
    return outputs


def run_action(gh: GitHubStandIn, tmp_path: Path, cwd: Path, event_name: str,
               payload: dict | None, *, sha: str = MERGE, ref: str = f"refs/pull/{PR}/merge",
               config: str = "ci-eval.toml", python: str = sys.executable, environ: dict | None = None,
               unset: tuple[str, ...] = (), **inputs: str) -> Job:
    """One job of the action: action.yml's own "Run ci-eval" step, then its Gate step.
    ``inputs`` are action inputs: ``comment="off"``. ``python`` and ``environ``: the
    interpreter the install step gave and the job's environment (default: this interpreter
    and the checkout's ci_eval); ``unset``: variables a runner sets that this job lacks."""
    job = tmp_path / f"job{len(list(tmp_path.glob('job*')))}"
    (job / "temp").mkdir(parents=True)
    (job / "output").touch()
    (job / "summary.md").touch()
    env = clean_environ() if environ is None else dict(environ)
    if payload is not None:
        (job / "event.json").write_text(json.dumps(payload))
        env["GITHUB_EVENT_PATH"] = str(job / "event.json")
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
        "CI_EVAL_RETRY_BACKOFF": "0.01",
    })
    for name in unset:
        env.pop(name)
    values = input_values({"config": config, **{n.replace("_", "-"): v for n, v in inputs.items()}}, gh.token)
    installed = {"install": {"python": python}}
    done = run_step("Run ci-eval", context_for(values, job / "temp", installed), env, cwd, job, timeout=120)
    outputs = parse_outputs((job / "output").read_text())
    code = int(outputs.pop("exit-code"))
    gate = run_step("Gate", context_for(values, job / "temp", {**installed, "run": {**outputs, "exit-code": str(code)}}),
                    env, cwd, job)
    token = values["github-token"]
    # The token reaches the log once, in the line that tells the runner to mask it.
    assert [line for line in done.stdout.splitlines() if token in line] in (
        [], [f"::add-mask::{token}"])
    assert token not in done.stderr
    assert done.returncode == 0, done.stderr  # the step itself keeps the exit code for the Gate
    return Job(code, done.stdout, done.stderr, outputs, (job / "summary.md").read_text(),
               job / "temp" / "ci-eval", gate)


def calls(gh: GitHubStandIn) -> list[tuple[str, str]]:
    """The API requests in order, the repository prefix cut off."""
    return [(r.method, r.path.removeprefix(PREFIX)) for r in gh.requests]


def bodies(gh: GitHubStandIn, number: int = PR) -> list[str]:
    return [c["body"] for c in gh.comments_on(number)]


def baseline_line(markdown: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith("**Baseline:**"))


def verdict_line(markdown: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith("### "))


def add_push_run(gh: GitHubStandIn, sha: str, artifact: bytes | None, age: timedelta,
                 **options) -> tuple[int, int | None]:
    """A push run of main ``age`` ago (ages are read against the real clock), with an artifact."""
    run_id = gh.add_run(sha, created_at=datetime.now(timezone.utc) - age, **options)
    artifact_id = gh.add_artifact(run_id, artifact) if artifact is not None else None
    return run_id, artifact_id


def run_url(run_id: int) -> str:
    return f"https://github.com/{REPO}/actions/runs/{run_id}"


def line_of(gold: dict, qid: str) -> int:
    text = json.dumps(gold, indent=2)
    return next(n for n, line in enumerate(text.splitlines(), 1) if f'"id": "{qid}"' in line)
