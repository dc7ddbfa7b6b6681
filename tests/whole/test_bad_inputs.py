"""The bad-input corpus (tests/bad_inputs/), each case through the real CLI in a subprocess.

Every case must end with exit code 2, one stderr line per problem that starts with
``ci-eval: error: `` and names the file and the place, no traceback, nothing on stdout
(for ``ci-eval action``: workflow commands only) and no file created or changed.

Layout: ``bad_inputs/_project/`` is a valid project (``ci-eval check`` and ``ci-eval run``
succeed on it; a test below proves it). ``bad_inputs/<class>/<case>/case.toml`` describes a
case and the other files in that folder are copied over the project, so each case folder
holds only what is wrong. ``case.toml`` keys:

  summary   what is wrong, in a few words (required)
  args      the command line after ``ci-eval`` (required)
  expect    substrings that must each appear in some error line: file and place (required)
  file      the file every error line names (default: the text before the first ':' of
            the first ``expect``)
  lines     the exact number of error lines (default: at least one)
  shows     one error line exactly (without the prefix); the docs quote it
  delete    project files to remove; ``mkdir``: folders to create (a folder where a file
            is expected); ``fifo``: named pipes to create in place of files (a reader that
            opens one blocking waits for a writer forever)
  existing_out  true: the ``--out`` file exists before the run (an earlier artefact) and
            must come out byte-identical; otherwise it must not be created
  env       extra environment; ``unset``: variables to remove (``action`` cases)
  action    true: run with a minimal GitHub Actions environment
  needs     ``ci_eval.<module>`` the case exercises; when it does not exist yet the case
            is an expected failure
  xfail     a known bug outside the corpus's reach, with the reason

``python tests/whole/test_bad_inputs.py`` rewrites the table in docs/reliability.md from the corpus;
``test_reliability_doc_matches_the_corpus`` fails when they differ.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

# Also run as a script (below), so the paths are its own, not tests/support's.
REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = REPO_ROOT / "tests" / "bad_inputs"
PROJECT = CORPUS / "_project"
DOC = REPO_ROOT / "docs" / "reliability.md"
PREFIX = "ci-eval: error: "
TOKEN = "ghs_corpusDummyToken0000000000000000000"

# Folder name -> the row title in docs/reliability.md, in the table's order.
CLASSES = {
    "gold_set": "Gold set (`gold.json`)",
    "config": "Configuration (`ci-eval.toml`, `pyproject.toml` `[tool.ci-eval]`)",
    "retriever_target": "Retriever and index targets (`module:function`)",
    "run_file": "Run files (JSON lines and TREC)",
    "qrels": "Qrels (`ci-eval evaluate`)",
    "answers": "Answers file (`answers.jsonl`)",
    "manifest": "Index manifest (JSON, JSON lines, one id per line)",
    "gold_files": "Judgements to import, files to export (`ci-eval gold import`, `gold export`)",
    "artefact": "Base run artefact (`--base`, `ci-eval compare`)",
    "shard": "Shards and their parts (`ci-eval run --shard`, `ci-eval merge`)",
    "event": "GitHub event payload and environment (`ci-eval action`)",
    "output": "Output paths (`--out`, the action's `out-dir`)",
    "label": "Labelling inputs (`ci-eval label`: `--chunks`, `--candidates`, `--pool`)",
}


def load_cases() -> list[dict]:
    cases = []
    for klass in CLASSES:
        folders = sorted((CORPUS / klass).iterdir()) if (CORPUS / klass).is_dir() else []
        for folder in folders:
            spec = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
            spec.update(klass=klass, folder=folder, id=f"{klass}/{folder.name}")
            cases.append(spec)
    return cases


CASES = load_cases()


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:
        return True


def _param(case: dict):
    marks = []
    if case.get("needs") and _missing(case["needs"]):
        marks.append(pytest.mark.xfail(strict=False, reason=f"{case['needs']} does not exist yet"))
    if case.get("xfail"):
        marks.append(pytest.mark.xfail(strict=False, reason=case["xfail"]))
    return pytest.param(case, id=case["id"], marks=marks)


def _base_env() -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_", "CI_EVAL_")) and k != "PYTHONPATH"
    }
    # Cases that import a user module must not leave __pycache__ behind: the tree is compared.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _actions_env(root: Path) -> dict:
    runner = root / "_runner"
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(root / "event.json"),
        "GITHUB_REPOSITORY": "acme/kb-search",
        "GITHUB_SHA": "2" * 40,
        "GITHUB_REF": "refs/pull/12/merge",
        "GITHUB_WORKFLOW_REF": "acme/kb-search/.github/workflows/ci-eval.yml@refs/heads/main",
        "GITHUB_API_URL": "http://127.0.0.1:9",
        "GITHUB_OUTPUT": str(runner / "output"),
        "GITHUB_STEP_SUMMARY": str(runner / "summary"),
        "RUNNER_TEMP": str(runner / "temp"),
        "INPUT_CONFIG": "ci-eval.toml",
        "GITHUB_TOKEN": TOKEN,
    }


def prepare(case: dict, root: Path) -> dict:
    """Copy the project and the case's files into ``root``; return the environment."""
    shutil.copytree(PROJECT, root)
    for path in case["folder"].rglob("*"):
        if path.is_file() and path.name != "case.toml":
            target = root / path.relative_to(case["folder"])
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    for name in case.get("delete", []):
        (root / name).unlink()
    for name in case.get("mkdir", []):
        target = root / name
        if target.is_file():
            target.unlink()
        target.mkdir(parents=True)
    for name in case.get("fifo", []):
        (root / name).unlink(missing_ok=True)
        os.mkfifo(root / name)
    env = _base_env()
    if case.get("action"):
        env.update(_actions_env(root))
        runner = root / "_runner"
        (runner / "temp").mkdir(parents=True)
        # Earlier steps of the job wrote here; a failed run must leave their lines as they are.
        (runner / "output").write_text("earlier<<EOF\nfrom an earlier step\nEOF\n")
        (runner / "summary").write_text("## An earlier step\n")
    if case.get("existing_out"):
        out = case["args"][case["args"].index("--out") + 1]
        (root / out).write_text('{"an": "artefact from an earlier run"}\n', encoding="utf-8")
    env.update(case.get("env", {}))
    for name in case.get("unset", []):
        env.pop(name, None)
    return env


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def run_cli(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ci_eval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=60,
    )


def test_the_project_the_cases_start_from_is_valid(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(PROJECT, root)
    env = _base_env()
    checked = run_cli(["check"], root, env)
    assert checked.returncode == 0, checked.stderr
    ran = run_cli(["run", "--quiet", "--base", "base.json", "--out", "out.json"], root, env)
    assert ran.returncode == 0, ran.stderr
    assert (root / "out.json").is_file()
    if not _missing("ci_eval.commands.compare"):
        compared = run_cli(["compare", "base.json", "head.json"], root, env)
        assert compared.returncode in (0, 1), compared.stderr  # the gate's verdict, not an error
    if not _missing("ci_eval.commands.evaluate"):
        evaluated = run_cli(["evaluate", "qrels.txt", "run.trec"], root, env)
        assert evaluated.returncode == 0, evaluated.stderr


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_bad_input(case, tmp_path):
    root = tmp_path / "case"
    env = prepare(case, root)
    before = snapshot(root)
    result = run_cli(case["args"], root, env)
    shown = f"\nexit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"

    assert "Traceback" not in result.stdout + result.stderr, shown
    assert result.returncode == 2, shown
    lines = result.stderr.splitlines()
    assert lines, shown
    for line in lines:
        assert line.startswith(PREFIX), f"not an error line: {line!r}{shown}"
    problems = [line[len(PREFIX):] for line in lines]
    file = case.get("file") or case["expect"][0].split(":")[0]
    for problem in problems:
        assert file in problem, f"{problem!r} does not name {file!r}{shown}"
    for fragment in case["expect"]:
        assert any(fragment in p for p in problems), f"{fragment!r} is in no error line{shown}"
    if "lines" in case:
        assert len(problems) == case["lines"], shown
    if "shows" in case:
        # A source given as an absolute path (GITHUB_EVENT_PATH) is shown relative in the docs.
        assert any(p == case["shows"] or p.endswith("/" + case["shows"]) for p in problems), shown

    if case.get("action"):
        # Workflow commands (::add-mask::, ::error::) may go to stdout; a report may not.
        assert all(line.startswith("::") for line in result.stdout.splitlines()), shown
        assert TOKEN not in result.stderr, shown
        assert all(TOKEN not in line or line.startswith("::add-mask::") for line in result.stdout.splitlines())
    else:
        assert result.stdout == "", shown
    assert snapshot(root) == before, f"files were created or changed{shown}"


# --------------------------------------------------------------------------- the docs table

TABLE_START = "<!-- corpus table: generated by `python tests/whole/test_bad_inputs.py` -->"
TABLE_END = "<!-- end of corpus table -->"


def render_table(cases: list[dict]) -> str:
    rows = [
        "| Input or fault class | Cases | What the user sees (an example, after `ci-eval: error: `) |",
        "| --- | ---: | --- |",
    ]
    for klass, title in CLASSES.items():
        mine = [c for c in cases if c["klass"] == klass]
        example = next((c["shows"] for c in mine if "shows" in c), "")
        cell = "`" + example.replace("|", "\\|").replace("`", "'") + "`" if example else ""
        rows.append(f"| {title} | {len(mine)} | {cell} |")
    rows.append(f"| **All bad inputs** | **{len(cases)}** | exit code 2, no traceback, no output written |")
    return "\n".join([TABLE_START, *rows, TABLE_END])


def _doc_with_table(text: str) -> str:
    head, _, rest = text.partition(TABLE_START)
    _, _, tail = rest.partition(TABLE_END)
    return head + render_table(CASES) + tail


def test_corpus_is_large_and_every_class_is_covered():
    assert len(CASES) >= 60
    for klass in CLASSES:
        mine = [c for c in CASES if c["klass"] == klass]
        assert len(mine) >= 3, klass
        assert any("shows" in c for c in mine), f"{klass}: no case gives the docs an example"
    for case in CASES:
        assert case.get("summary") and case.get("args") and case.get("expect"), case["id"]


def test_reliability_doc_matches_the_corpus():
    text = DOC.read_text(encoding="utf-8")
    assert TABLE_START in text and TABLE_END in text
    assert text == _doc_with_table(text), "docs/reliability.md is stale: run python tests/whole/test_bad_inputs.py"


if __name__ == "__main__":
    DOC.write_text(_doc_with_table(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote the corpus table ({len(CASES)} cases) into {DOC.relative_to(REPO_ROOT)}")
