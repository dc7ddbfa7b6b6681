"""What the framework retriever types share (retrieval/framework.py): a missing framework
package is bad input with the command that installs it; a failing factory is a failed
retriever."""

import json
import sys

import pytest

from ci_eval.cli import main

PACKAGES = {"langchain": ("langchain_core", "langchain-core"), "llamaindex": ("llama_index.core", "llama-index-core"),
            "haystack": ("haystack", "haystack-ai")}


def project(tmp_path, monkeypatch, retriever: str):
    project_files(tmp_path, retriever)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("kind", sorted(PACKAGES))
def test_a_missing_framework_is_exit_2_at_retriever_type_with_the_pip_command(tmp_path, monkeypatch, capsys, kind):
    module, package = PACKAGES[kind]
    project(tmp_path, monkeypatch, f'type = "{kind}"\ntarget = "app:retriever"')
    monkeypatch.setitem(sys.modules, module, None)  # what an absent package looks like to import
    assert main(["run", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f'ci-eval: error: ci-eval.toml:retriever.type: retriever type "{kind}" needs the '
                          f"{package} package")
    assert err.endswith(f"install it where ci-eval runs: pip install {package}")
    assert "\n" not in err and not (tmp_path / "ci-eval-run.json").exists()


def test_a_factory_that_raises_fails_the_retriever(tmp_path, monkeypatch, capsys):
    pytest.importorskip("langchain_core", reason="langchain-core is not installed")
    project(tmp_path, monkeypatch, 'type = "langchain"\ntarget = "broken_factory:build"')
    (tmp_path / "broken_factory.py").write_text("def build():\n    raise ConnectionError('vector db unreachable')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["run", "--quiet"]) == 4
    assert capsys.readouterr().err.strip() == (
        "ci-eval: error: broken_factory:build() raised ConnectionError: vector db unreachable")


@pytest.mark.parametrize("kind", sorted(PACKAGES))
def test_check_names_a_missing_framework_with_its_pip_line(tmp_path, monkeypatch, capsys, kind):
    module, package = PACKAGES[kind]
    project(tmp_path, monkeypatch, f'type = "{kind}"\ntarget = "app:retriever"')
    monkeypatch.setitem(sys.modules, module, None)
    assert main(["check"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f'ci-eval: error: ci-eval.toml:retriever.type: retriever type "{kind}" needs the '
                          f"{package} package")
    assert err.endswith(f"install it where ci-eval runs: pip install {package}")


TARGETS = {"langchain": "retrievers_langchain:retriever", "llamaindex": "retrievers_llamaindex:retriever",
           "haystack": "retrievers_haystack:bm25"}


def _framework_cli(tmp_path, kind: str, target: str, command: str):
    pytest.importorskip(PACKAGES[kind][0], reason=f"{PACKAGES[kind][1]} is not installed")
    from framework_projects import cli

    (tmp_path / "gold.json").write_text(json.dumps(
        {"schema_version": 1, "questions": [{"id": "q1", "question": "alpha", "gold": ["kb/keys#rotate"]}]}))
    (tmp_path / "ci-eval.toml").write_text(f'gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "{kind}"\n'
                                           f'target = "{target}"\n')
    return cli(*command.split(), cwd=tmp_path)


@pytest.mark.parametrize("kind", sorted(TARGETS))
def test_check_imports_a_framework_target_as_run_does(tmp_path, kind):
    good = _framework_cli(tmp_path, kind, TARGETS[kind], "check")
    assert good.returncode == 0, good.stderr
    assert f"ci-eval.toml: ok ({kind} retriever" in good.stdout
    module, attr = TARGETS[kind].split(":")
    for target, said in ((f"{module}:{attr}_typo", f"module '{module}' has no attribute '{attr}_typo'"),
                         (f"{module}s:{attr}", f"cannot import '{module}s': no module named '{module}s'"),
                         ("framework_corpus:GOLD", "'framework_corpus:GOLD' is a dict, expected a")):
        outs = [_framework_cli(tmp_path, kind, target, command) for command in ("check", "run --quiet")]
        for out in outs:
            assert out.returncode == 2, (target, out.stderr)
            assert out.stderr.startswith(f"ci-eval: error: ci-eval.toml:retriever.target: {said}"), out.stderr
        assert outs[0].stderr == outs[1].stderr  # check says what run says


def test_check_calls_the_factory_as_run_does(tmp_path):
    (tmp_path / "broken_factory.py").write_text("def build():\n    raise ConnectionError('vector db unreachable')\n")
    out = _framework_cli(tmp_path, "langchain", "broken_factory:build", "check")
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == ("ci-eval: error: ci-eval.toml:retriever.target: "
                                  "broken_factory:build() raised ConnectionError: vector db unreachable")


# Every way out of a factory, and what ci-eval then says it did.
FACTORY_EXITS = {
    "raise SystemExit": "called sys.exit(None)",
    "sys.exit(0)": "called sys.exit(0)",
    "os._exit(0)": "called os._exit(0)",
}


@pytest.mark.parametrize(("kind", "body"), [
    *[("langchain", body) for body in FACTORY_EXITS],
    ("llamaindex", "os._exit(0)"),
    ("haystack", "raise SystemExit"),
])
def test_a_factory_that_exits_is_a_failed_retriever_through_the_cli(tmp_path, kind, body):
    pytest.importorskip(PACKAGES[kind][0], reason=f"{PACKAGES[kind][1]} is not installed")
    from framework_projects import cli

    (tmp_path / "exiting_factory.py").write_text(f"import os\nimport sys\n\n\ndef build():\n    {body}\n")
    project_files(tmp_path, f'type = "{kind}"\ntarget = "exiting_factory:build"')
    done = cli("run", "--out", "run.json", "--quiet", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})

    assert done.returncode == 4, (done.returncode, done.stderr)
    assert done.stderr.strip() == f"ci-eval: error: exiting_factory:build() {FACTORY_EXITS[body]}"
    assert not (tmp_path / "run.json").exists()


def project_files(tmp_path, retriever: str) -> None:
    (tmp_path / "gold.json").write_text(json.dumps(
        {"schema_version": 1, "questions": [{"id": "q1", "question": "alpha", "gold": ["a"]}]}))
    (tmp_path / "ci-eval.toml").write_text(f'gold_set = "gold.json"\nk = 1\n[retriever]\n{retriever}\n')
