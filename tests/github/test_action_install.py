"""action/install.sh, the script action.yml's install steps run: the private venv's cache
key, a cold and a warm (cache-restored) install, and the `python` input, which installs
ci-eval into the workflow's own interpreter so a `python` target imports the app as it is,
exercised end to end against the loopback GitHub stand-in.

No test reaches the internet: pip runs with no index, and the packages it would download
are this test environment's, put on PYTHONPATH (pip counts them as installed)."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from action_harness import BASE, push_event, run_action
from run_files import read_run
from suite_paths import REPO_ROOT

DEPS = sysconfig.get_paths()["purelib"]  # where PyGithub, numpy, ... are installed here


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """The action's checkout (github.action_path), copied so builds leave the repo alone."""
    root = tmp_path_factory.mktemp("action") / "ci-eval"
    root.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in ("ci_eval", "requirements", "action"):
        shutil.copytree(REPO_ROOT / name, root / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, root / name)
    return root


def script(source: Path, command: str, tmp_path: Path, **env: str):
    out = tmp_path / f"output-{len(list(tmp_path.glob('output-*')))}"
    out.touch()
    full = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": DEPS, "PIP_NO_INDEX": "1",
            "PIP_NO_BUILD_ISOLATION": "0", "GITHUB_OUTPUT": str(out), "CI_EVAL_SOURCE": str(source),
            "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", **env}
    done = subprocess.run(["bash", str(source / "action" / "install.sh"), command], env=full,
                          capture_output=True, text=True, timeout=300, check=False)
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    return done, outputs


def imported_from(python: str, module: str) -> str:
    # From the root folder: the checkout's own ci_eval/ must not be what gets imported.
    done = subprocess.run([python, "-c", f"import {module}; print({module}.__file__)"], capture_output=True,
                          text=True, env={"PATH": os.environ["PATH"], "PYTHONPATH": DEPS}, cwd="/", check=True)
    return done.stdout.strip()


def test_the_cache_key_follows_the_requirements_and_the_interpreter(source, tmp_path):
    done, first = script(source, "key", tmp_path, CI_EVAL_PYTHON=sys.executable)
    assert done.returncode == 0, done.stderr
    version = ".".join(map(str, sys.version_info[:3]))
    assert first["key"].startswith(f"ci-eval-venv-Linux-X64-py{version}-")
    assert script(source, "key", tmp_path, CI_EVAL_PYTHON=sys.executable)[1] == first
    edited = tmp_path / "edited"
    shutil.copytree(source, edited)
    (edited / "ci_eval" / "__init__.py").write_text((source / "ci_eval" / "__init__.py").read_text() + "# edited\n")
    assert script(edited, "key", tmp_path, CI_EVAL_PYTHON=sys.executable)[1] != first  # a new ci-eval
    extra = tmp_path / "requirements.txt"
    extra.write_text("rank-bm25==0.2.2\n")
    _, with_extra = script(source, "key", tmp_path, CI_EVAL_PYTHON=sys.executable, CI_EVAL_EXTRA=str(extra))
    assert with_extra["key"] != first["key"]


def test_cold_then_warm_private_venv(source, tmp_path):
    venv = tmp_path / "ci-eval-venv"
    env = {"CI_EVAL_PYTHON": sys.executable, "CI_EVAL_VENV": str(venv)}
    done, outputs = script(source, "install", tmp_path, **env)
    assert done.returncode == 0, done.stderr
    assert outputs == {"python": str(venv / "bin" / "python")}
    assert imported_from(outputs["python"], "ci_eval").startswith(str(venv))
    # A requirement no index has: a cold install must fail on it, a warm one never reads it.
    broken = tmp_path / "broken"
    shutil.copytree(source, broken)
    with (broken / "requirements" / "action.txt").open("a") as fh:
        fh.write("no-such-package-anywhere==0.0.1\n")
    warm, outputs = script(broken, "install", tmp_path, CI_EVAL_CACHE_HIT="true", **env)
    assert warm.returncode == 0, warm.stderr
    assert "environment restored from the cache: nothing to install" in warm.stdout
    assert outputs == {"python": str(venv / "bin" / "python")}
    cold, _ = script(broken, "install", tmp_path, CI_EVAL_CACHE_HIT="", **env)
    assert cold.returncode != 0 and "no-such-package-anywhere" in cold.stderr


def test_a_broken_restored_venv_is_rebuilt(source, tmp_path):
    venv = tmp_path / "ci-eval-venv"
    (venv / "bin").mkdir(parents=True)  # what a cache of another runner image might hold
    done, outputs = script(source, "install", tmp_path, CI_EVAL_PYTHON=sys.executable, CI_EVAL_VENV=str(venv),
                           CI_EVAL_CACHE_HIT="true")
    assert done.returncode == 0, done.stderr
    assert "restored from the cache" not in done.stdout
    assert imported_from(outputs["python"], "ci_eval").startswith(str(venv))


def test_a_python_input_that_is_no_interpreter_is_exit_2(source, tmp_path):
    done, outputs = script(source, "install", tmp_path, CI_EVAL_USER_PYTHON=str(tmp_path / "nope"))
    assert done.returncode == 2 and outputs == {}
    assert done.stdout.strip() == f"::error title=ci-eval::python input: no interpreter at '{tmp_path / 'nope'}'"


APP = '''"""The user's app: importable only in the environment the workflow set up."""
CHUNKS = {"alpha": "alpha please", "beta": "beta please", "gamma": "gamma please"}


def search(question, k):
    first = question.split()[0]
    return [(cid, 1.0 if cid == first else 0.1) for cid in CHUNKS][:k]
'''


def test_the_python_input_runs_the_action_in_the_workflow_s_environment(source, tmp_path, gh):  # noqa: F811
    user = tmp_path / "app-env"
    subprocess.run([sys.executable, "-m", "venv", str(user)], check=True)
    site = Path(subprocess.run([str(user / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip())
    (site / "userapp.py").write_text(APP)  # as `pip install -e .` would have made it importable
    done, outputs = script(source, "install", tmp_path, CI_EVAL_USER_PYTHON=str(user / "bin" / "python"))
    assert done.returncode == 0, done.stderr
    assert outputs == {"python": str(user / "bin" / "python")}
    assert imported_from(outputs["python"], "ci_eval").startswith(str(site))

    checkout = tmp_path / "checkout"
    (checkout / "eval").mkdir(parents=True)
    (checkout / "eval" / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": "q1", "question": "alpha please", "gold": ["alpha"]},
        {"id": "q2", "question": "gamma please", "gold": ["beta"]}]}))
    (checkout / "ci-eval.toml").write_text('gold_set = "eval/gold.json"\nk = 1\n[retriever]\ntype = "python"\n'
                                           'target = "userapp:search"\n')
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": DEPS,
               "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    job = run_action(gh, tmp_path, checkout, "push", push_event(BASE), sha=BASE, ref="refs/heads/main",
                     python=outputs["python"], environ=environ)
    assert job.code == 0, job.stderr
    artefact = read_run(job.bundle / "ci-eval-run.json")
    assert artefact["config"]["retriever"]["target"] == "userapp:search"
    # userapp ranks the chunk named by the question's first word first: q1 hits, q2 misses.
    assert float(job.outputs["hit-at-k"]) == (1 + 0) / 2


def test_action_yml_passes_the_script_exactly_what_it_reads():
    import re

    action = (REPO_ROOT / "action.yml").read_text()
    steps = action.split("    - name: ")
    passed = set()
    for step in steps:
        if "action/install.sh" in step:
            passed |= set(re.findall(r"^\s+(CI_EVAL_[A-Z_]+):", step, re.M))
    read = set(re.findall(r"\$\{?(CI_EVAL_[A-Z_]+)", (REPO_ROOT / "action" / "install.sh").read_text()))
    assert passed == read
    # ci-eval runs from the action's entry file, never `-m ci_eval` (the workspace first on the path)
    assert '"$CI_EVAL_INTERPRETER" "$CI_EVAL_SOURCE/action/entry.py" action' in (REPO_ROOT / "action" / "run.sh").read_text()
    assert "-m ci_eval" not in action
