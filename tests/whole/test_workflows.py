"""action.yml and the workflows: valid against GitHub's schemas, pinned, injection-safe."""

import re
import subprocess
from pathlib import Path

import pytest
from schema_check import check_jsonschema
from suite_paths import REPO_ROOT

ROOT = REPO_ROOT
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
FILES = [ROOT / "action.yml", *WORKFLOWS]


def test_action_yml_is_valid():
    out = subprocess.run([check_jsonschema(), "--builtin-schema", "vendor.github-actions", str(ROOT / "action.yml")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_valid(workflow):
    out = subprocess.run([check_jsonschema(), "--builtin-schema", "vendor.github-workflows", str(workflow)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_schema_check_can_fail(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("name: x\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps: 3\n")
    out = subprocess.run([check_jsonschema(), "--builtin-schema", "vendor.github-workflows", str(bad)],
                         capture_output=True, text=True)
    assert out.returncode != 0


USES = re.compile(r"^\s*(?:-\s*)?uses:\s*(\S+)", re.M)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_third_party_actions_are_pinned_by_full_sha(path):
    for ref in USES.findall(path.read_text()):
        if ref.startswith("./"):
            continue
        assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}", ref), ref


def run_blocks(text: str):
    """The bodies of every `run:` step (block scalars included)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)(?:-\s*)?run:\s*(.*)$", line)
        if not m:
            continue
        body = [m.group(2)]
        indent = len(m.group(1))
        for nxt in lines[i + 1 :]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            body.append(nxt)
        yield "\n".join(body)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_expressions_inside_run_scripts(path):
    # Inputs and event fields reach scripts through env:, never pasted into shell text.
    for body in run_blocks(path.read_text()):
        assert "${{" not in body, body


def test_no_pull_request_target():
    for workflow in WORKFLOWS:
        assert "pull_request_target" not in workflow.read_text()


def test_every_workflow_sets_minimal_permissions():
    for workflow in WORKFLOWS:
        assert re.search(r"^permissions:", workflow.read_text(), re.M), workflow.name


def test_action_inputs_are_all_passed_and_documented():
    text = (ROOT / "action.yml").read_text()
    inputs = re.findall(r"^  ([a-z][a-z0-9-]*):\n    description:", text.split("outputs:")[0], re.M)
    readme = (ROOT / "README.md").read_text()
    for name in inputs:
        if name in ("python-version", "extra-requirements", "python"):  # for the install steps
            assert f"inputs.{name}" in text
        elif name == "github-token":  # handed over on a descriptor, never as INPUT_GITHUB-TOKEN
            assert "CI_EVAL_TOKEN: ${{ inputs.github-token }}" in text and "INPUT_GITHUB-TOKEN" not in text
        else:
            assert f"INPUT_{name.upper()}: ${{{{ inputs.{name} }}}}" in text, name
        assert f"`{name}`" in readme, f"input {name} is not documented in README.md"


def _yaml(path: Path) -> dict:
    yaml = pytest.importorskip("ruamel.yaml", reason="ruamel.yaml comes with check-jsonschema")
    return yaml.YAML(typ="safe").load(path.read_text())


def test_the_poster_may_check_out_a_private_repository():
    for path in (ROOT / ".github" / "workflows" / "ci-eval-comment.yml",):
        assert _yaml(path)["permissions"]["contents"] == "read"
    poster_snippet = (ROOT / "README.md").read_text().split("ci-eval-comment.yml`:")[1].split("```")[1]
    assert re.search(r"^  contents: read\b", poster_snippet, re.M)


def test_a_run_on_main_is_never_cancelled_by_the_next_push():
    # A cancelled push run leaves its commit without a baseline; only pull-request runs are
    # superseded by a newer push to the same pull request.
    concurrency = _yaml(ROOT / ".github" / "workflows" / "ci-eval.yml")["concurrency"]
    assert concurrency["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    # Each pushed commit has its own group, so a queued push run is not replaced either.
    assert "github.sha" in concurrency["group"] and "github.ref" not in concurrency["group"]


def test_ci_runs_the_readme_s_test_command_verbatim():
    command = (ROOT / ".ci" / "run").read_text().splitlines()[-1]
    assert command.startswith("python3 -m venv .venv && ") and " -m pytest " in command
    assert f"```sh\n{command}\n```" in (ROOT / "README.md").read_text()
