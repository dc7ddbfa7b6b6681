"""docs/other-ci.md's GitLab job and generic recipe, and .pre-commit-hooks.yaml: the GitLab
job is validated against GitLab's CI schema (check-jsonschema) and its script is run, like a
GitLab runner runs it, in one shell over a project `ci-eval init` wrote, with `pip` and
`curl` stood in for (no network): `curl` serves a stored baseline artefact and logs what it
was asked."""

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from schema_check import check_jsonschema
from suite_paths import REPO_ROOT

ROOT = REPO_ROOT
DOC = (ROOT / "docs" / "other-ci.md").read_text()

FAKE_CURL = """#!/bin/sh
# Logs its arguments; serves $FAKE_BASELINE to --output, or fails as curl --fail does (22).
echo "$@" >> "$CURL_LOG"
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--output" ]; then out="$2"; shift; fi
  shift
done
[ -n "${FAKE_BASELINE:-}" ] && [ -f "$FAKE_BASELINE" ] || exit 22
cp "$FAKE_BASELINE" "$out"
"""


def block(heading: str, language: str) -> str:
    section = DOC.split(f"## {heading}\n", 1)[1]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def project(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("curl", FAKE_CURL), ("pip", "#!/bin/sh\nexit 0\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    root = tmp_path / "repo"
    root.mkdir()
    env = {"PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]]),
           "HOME": str(tmp_path), "CURL_LOG": str(tmp_path / "curl.log")}
    subprocess.run(["ci-eval", "init"], cwd=root, env=env, check=True, capture_output=True)
    return root, env


def gitlab_job(root: Path, env: dict, **ci: str) -> subprocess.CompletedProcess:
    job = yaml.safe_load(block("GitLab CI", "yaml"))["ci-eval"]
    # A GitLab runner runs the script's lines in one shell, stopping at the first failure.
    script = "set -e\n" + "\n".join(job["script"]) + "\n"
    variables = {"CI_API_V4_URL": "https://gitlab.example/api/v4", "CI_PROJECT_ID": "42", "CI_JOB_NAME": "ci-eval",
                 "CI_JOB_TOKEN": "job-token-1", "CI_DEFAULT_BRANCH": "main", "CI_PROJECT_DIR": str(root), **ci}
    return subprocess.run(["sh", "-c", script], cwd=root, env={**env, **variables}, capture_output=True, text=True,
                          timeout=300, check=False)


def test_the_gitlab_job_is_valid_gitlab_ci(tmp_path):
    path = tmp_path / ".gitlab-ci.yml"
    path.write_text(block("GitLab CI", "yaml"))
    out = subprocess.run([check_jsonschema(), "--builtin-schema", "vendor.gitlab-ci", str(path)],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_gitlab_job_on_main_then_on_a_merge_request(project, tmp_path):
    root, env = project
    main = gitlab_job(root, env, CI_PIPELINE_SOURCE="push", CI_COMMIT_BRANCH="main")
    assert main.returncode == 0, main.stdout + main.stderr
    baseline = tmp_path / "stored" / "ci-eval-run.json"
    baseline.parent.mkdir()
    baseline.write_bytes((root / "ci-eval-run.json").read_bytes())  # what GitLab keeps as the artifact

    mr = gitlab_job(root, {**env, "FAKE_BASELINE": str(baseline)}, CI_PIPELINE_SOURCE="merge_request_event",
                    CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main")
    assert mr.returncode == 0, mr.stdout + mr.stderr
    comment = (root / "ci-eval-comment.md").read_text()
    assert comment in mr.stdout and "No baseline to compare against" not in comment
    asked = (tmp_path / "curl.log").read_text().splitlines()
    assert asked == ["--fail --silent --show-error --location --header JOB-TOKEN: job-token-1 --output base.json "
                     "https://gitlab.example/api/v4/projects/42/jobs/artifacts/main/raw/ci-eval-run.json?job=ci-eval"]

    # The change breaks the retriever: the gate fails and so does the job (exit 1).
    (root / "eval" / "example_retriever.py").write_text(
        "def search(question, k):\n    return [('kb/billing#invoice', 1.0)]\n")
    worse = gitlab_job(root, {**env, "FAKE_BASELINE": str(baseline)}, CI_PIPELINE_SOURCE="merge_request_event",
                       CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main")
    assert worse.returncode == 1, worse.stdout + worse.stderr


def test_the_gitlab_job_without_a_baseline_checks_floors_only(project):
    root, env = project
    mr = gitlab_job(root, env, CI_PIPELINE_SOURCE="merge_request_event", CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main")
    assert mr.returncode == 0, mr.stdout + mr.stderr
    assert "ci-eval: no baseline artefact on main yet: floors only" in mr.stdout
    assert "No baseline to compare against" in (root / "ci-eval-comment.md").read_text()


def test_the_gitlab_job_stops_with_4_when_the_retriever_fails(project):
    root, env = project
    (root / "eval" / "example_retriever.py").write_text("def search(question, k):\n    raise OSError('index down')\n")
    done = gitlab_job(root, env, CI_PIPELINE_SOURCE="push", CI_COMMIT_BRANCH="main")
    # The artefact is written and names each failure; the job stops at `ci-eval run`.
    # Every question fails, the unanswerable one too: a failure is never an abstention.
    assert done.returncode == 4 and "the retriever failed on 3 question(s) (1 of them unanswerable)" in done.stderr
    assert "index down" in (root / "ci-eval-run.json").read_text()
    assert not (root / "ci-eval-comment.md").exists()


@pytest.mark.parametrize("baseline", ["", "path", "https://artefacts.example/main/ci-eval-run.json"])
def test_the_generic_recipe(project, tmp_path, baseline):
    root, env = project
    subprocess.run(["ci-eval", "run", "--out", str(tmp_path / "base.json"), "--quiet"], cwd=root, env=env, check=True)
    if baseline == "path":
        baseline = str(tmp_path / "base.json")
    done = subprocess.run(["sh", "-c", block("Any other CI: the generic recipe", "sh")], cwd=root,
                          env={**env, "CI_EVAL_BASELINE": baseline, "FAKE_BASELINE": str(tmp_path / "base.json")},
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("No baseline to compare against" in done.stdout) == (not baseline)


def test_the_pre_commit_hook_runs_ci_eval_check(project):
    root, env = project
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "ci-eval-check" and hook["language"] == "python" and hook["pass_filenames"] is False
    assert re.search(hook["files"], "eval/gold.json") and not re.search(hook["files"], "app/main.py")
    ok = subprocess.run(hook["entry"].split(), cwd=root, env=env, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    (root / "ci-eval.toml").write_text((root / "ci-eval.toml").read_text().replace("k = 5", 'k = "five"'))
    bad = subprocess.run(hook["entry"].split(), cwd=root, env=env, capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "ci-eval.toml:k:" in bad.stderr
