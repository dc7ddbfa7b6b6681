"""`ci-eval init` through the real CLI: an empty folder becomes a project that `ci-eval check`
and `ci-eval run` accept with no edit; nothing is overwritten unasked."""

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest
from framework_projects import cli
from run_files import read_run
from schema_check import check_jsonschema
from suite_paths import REPO_ROOT

ROOT = REPO_ROOT
WRITTEN = ["ci-eval.toml", "eval/gold.json", "eval/example_chunks.json", "eval/example_retriever.py",
           ".github/workflows/ci-eval.yml", ".github/workflows/ci-eval-comment.yml"]
PACKAGES = {"langchain": "langchain_core", "llamaindex": "llama_index.core", "haystack": "haystack"}


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_init_in_an_empty_folder_then_check_and_run_work_with_no_edit(tmp_path):
    done = cli("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith("wrote ")] == [f"wrote {p}" for p in WRITTEN]
    assert "next steps:" in done.stdout and "  3. " in done.stdout and "  4. " not in done.stdout
    check = cli("check", cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert "eval/gold.json: ok (3 questions, 2 answerable, 1 unanswerable)" in check.stdout
    run = cli("run", "--quiet", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    art = read_run(tmp_path / "ci-eval-run.json")
    q = {e["id"]: e for e in art["questions"]}
    # The example retriever finds each example question's gold chunk first.
    assert q["q-001"]["first_gold_rank"] == 1 and q["q-002"]["ranking"][0]["id"] == "kb/sso#regions"
    assert q["q-003"]["status"] == "unanswerable"
    assert art["config"]["retriever"]["target"] == "eval.example_retriever:search"


def test_init_writes_the_per_question_rule_and_a_floor_and_a_run_compares_under_them(tmp_path):
    import tomllib

    assert cli("init", cwd=tmp_path).returncode == 0
    gate = tomllib.loads((tmp_path / "ci-eval.toml").read_text())["gate"]
    assert gate == {"lost_gold": True, "min": {"hit@5": 0.5}}
    # the workflow runs again when the accept label is put on or taken off
    workflow = (tmp_path / ".github/workflows/ci-eval.yml").read_text()
    assert "types: [opened, synchronize, reopened, labeled, unlabeled]" in workflow
    assert cli("run", "--quiet", "--out", "base.json", cwd=tmp_path).returncode == 0
    compared = cli("compare", "base.json", "base.json", cwd=tmp_path)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    # two answerable questions are too few for the paired tests, not for the per-question rule
    assert "- ✅ **lost_gold** no question lost its gold chunk at k=5" in compared.stdout
    assert "- ✅ **min** hit@5 is 1.000, at or above the floor 0.500" in compared.stdout


def test_an_existing_file_is_named_and_nothing_is_written(tmp_path):
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "gold.json").write_text("my real gold set\n")
    before = snapshot(tmp_path)
    done = cli("init", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (
        "ci-eval: error: eval/gold.json: already exists (--force overwrites it); nothing was written")
    assert snapshot(tmp_path) == before


def test_force_overwrites_but_never_a_folder(tmp_path):
    (tmp_path / "ci-eval.toml").write_text("old\n")
    done = cli("init", "--force", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ci-eval.toml").read_text().startswith("# ci-eval:")
    (tmp_path / "eval" / "gold.json").unlink()
    (tmp_path / "eval" / "gold.json").mkdir()
    done = cli("init", "--force", cwd=tmp_path)
    assert done.returncode == 2 and "eval/gold.json: is a folder; nothing was written" in done.stderr


@pytest.mark.parametrize("kind, file, text", [
    ("langchain", "requirements.txt", "fastapi>=0.110\nlangchain_core[extra]==1.8 ; python_version > '3.9'\n"),
    ("llamaindex", "pyproject.toml", '[project]\nname = "app"\ndependencies = ["llama-index-core>=0.14"]\n'),
    ("haystack", "requirements-dev.txt", "# search\nhaystack-ai\n"),
])
def test_a_declared_framework_fills_the_retriever_and_its_example_runs(tmp_path, kind, file, text):
    (tmp_path / file).write_text(text)
    done = cli("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{kind} found in {file}" in done.stdout
    config = (tmp_path / "ci-eval.toml").read_text()
    assert f'type = "{kind}"' in config
    workflow = (tmp_path / ".github/workflows/ci-eval.yml").read_text()
    # The workflow installs requirements.txt only where the project has one.
    assert ("extra-requirements: requirements.txt" in workflow) == (file == "requirements.txt")
    if importlib.util.find_spec(PACKAGES[kind].split(".")[0]) is None:
        pytest.skip(f"{PACKAGES[kind]} is not installed: the example is not run")
    assert cli("check", cwd=tmp_path).returncode == 0
    run = cli("run", "--quiet", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    art = read_run(tmp_path / "ci-eval-run.json")
    assert art["config"]["retriever"]["type"] == kind
    assert [q["first_gold_rank"] for q in art["questions"][:2]] == [1, 1]


def test_the_written_workflows_are_valid_and_are_the_readme_s(tmp_path):
    assert cli("init", cwd=tmp_path).returncode == 0
    for name in ("ci-eval.yml", "ci-eval-comment.yml"):
        path = tmp_path / ".github" / "workflows" / name
        out = subprocess.run([check_jsonschema(), "--builtin-schema", "vendor.github-workflows", str(path)],
                             capture_output=True, text=True, check=False)
        assert out.returncode == 0, out.stdout + out.stderr
    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    templates = ROOT / "ci_eval" / "templates"
    for name in ("ci-eval.yml.tmpl", "ci-eval-comment.yml.tmpl"):
        assert (templates / name).read_text() in blocks, f"{name} differs from the README's workflow"


def test_the_example_retriever_names_what_it_is_called_with(tmp_path):
    import inspect

    assert cli("init", cwd=tmp_path).returncode == 0
    spec = importlib.util.spec_from_file_location("example", tmp_path / "eval" / "example_retriever.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # ci-eval calls search(question, depth), depth 3k (15 at k = 5), never k
    assert list(inspect.signature(module.search).parameters) == ["question", "depth"]
    assert "function(question, depth)" in (tmp_path / "ci-eval.toml").read_text()

@pytest.mark.parametrize(("tool", "file", "text", "missing"), [
    ("promptfoo", "promptfooconfig.yaml", "prompts: ['{{question}}']\n", "eval/promptfoo-results.json"),
    ("deepeval", "requirements.txt", "deepeval>=3\n", "eval/deepeval-results"),
    ("ragas", "pyproject.toml", '[project]\nname = "app"\ndependencies = ["ragas==0.4.3"]\n', "eval/ragas-results.csv"),
])
def test_init_writes_the_answers_section_of_the_eval_the_project_runs(tmp_path, tool, file, text, missing):
    (tmp_path / file).write_text(text)
    done = cli("init", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{tool} found in {file}: a commented [answers] section" in done.stdout
    config = (tmp_path / "ci-eval.toml").read_text()
    section = config[config.index("# [answers]"):]
    assert f'# type = "{tool}"' in section and all(line.startswith("# ") for line in section.splitlines())
    # Commented, the written project checks as it is; uncommented, the section is a valid
    # [answers] table whose only problem is the results file the eval has not written yet.
    assert cli("check", cwd=tmp_path).returncode == 0
    (tmp_path / "ci-eval.toml").write_text(config.replace(section, "\n".join(
        line[2:] for line in section.splitlines()) + "\n"))
    check = cli("check", cwd=tmp_path)
    assert check.returncode == 2 and missing in check.stderr and "not found" in check.stderr, check.stderr


def test_init_without_an_end_to_end_tool_writes_no_answers_section(tmp_path):
    assert cli("init", cwd=tmp_path).returncode == 0
    assert "[answers]" not in (tmp_path / "ci-eval.toml").read_text()
