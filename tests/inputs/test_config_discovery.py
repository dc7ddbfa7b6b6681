"""One config discovery for every command: ci-eval.toml, else [tool.ci-eval] in
pyproject.toml, in the current folder and then its parents up to the repository root;
every relative path, the import path and the command's folder resolve against the
config file's folder. Real projects, real CLI."""

from __future__ import annotations

from projects import GOOD_RETRIEVER, artefact, cli, write_config, write_gold, write_module, write_script

PY = 'type = "python"\ntarget = "retriever:search"\n'


def good_project(root):
    write_gold(root)
    write_module(root, "retriever", GOOD_RETRIEVER)
    write_config(root, PY)
    sub = root / "src" / "deep"
    sub.mkdir(parents=True)
    return sub


def test_run_from_a_subfolder_finds_the_config_in_a_parent(tmp_path):
    (tmp_path / ".git").mkdir()
    sub = good_project(tmp_path)
    out = cli("run", "--out", "run.json", cwd=sub)
    assert out.returncode == 0, out.stderr
    # the gold set, the python import path: all the config file's folder, not the current one
    assert artefact(sub)["summary"]["overall"]["means"]["hit@1"] == 1.0
    assert cli("check", cwd=sub).returncode == 0


def test_pyproject_table_in_a_parent(tmp_path):
    write_gold(tmp_path)
    write_module(tmp_path, "retriever", GOOD_RETRIEVER)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.ci-eval]\ngold_set = "gold.json"\nk = 1\n\n'
        '[tool.ci-eval.retriever]\ntype = "python"\ntarget = "retriever:search"\n')
    sub = tmp_path / "docs"
    sub.mkdir()
    out = cli("check", cwd=sub)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("../pyproject.toml: ok")


def test_a_pyproject_without_the_table_does_not_stop_the_search(tmp_path):
    sub = good_project(tmp_path)
    (sub / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    assert cli("check", cwd=sub).returncode == 0


def test_the_search_stops_at_the_repository_root(tmp_path):
    good_project(tmp_path)
    repo = tmp_path / "src"
    (repo / ".git").mkdir()  # src/ is a repository of its own: the config above is not its
    out = cli("check", cwd=repo / "deep")
    assert out.returncode == 2
    assert "no configuration found" in out.stderr and "repository root" in out.stderr


def test_both_kinds_in_one_folder_is_an_error_naming_both(tmp_path):
    good_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.ci-eval]\ngold_set = "gold.json"\nk = 1\n')
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 2
    assert "ci-eval.toml" in out.stderr and "[tool.ci-eval] in" in out.stderr and "pyproject.toml" in out.stderr
    assert not (tmp_path / "run.json").exists()


def test_an_underscore_table_gets_a_did_you_mean(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ci_eval]\ngold_set = "gold.json"\nk = 1\n')
    out = cli("check", cwd=tmp_path)
    assert out.returncode == 2
    assert "[tool.ci_eval] is not read by ci-eval (did you mean [tool.ci-eval]?)" in out.stderr


def test_config_given_from_a_subfolder_imports_and_runs_from_the_config_folder(tmp_path):
    good_project(tmp_path)
    sub = tmp_path / "src" / "deep"
    # a module of the same name in the current folder must not be the one imported
    write_module(sub, "retriever", "def search(question, depth):\n    return []\n")
    out = cli("run", "--config", "../../ci-eval.toml", "--out", "run.json", cwd=sub)
    assert out.returncode == 0, out.stderr
    assert artefact(sub)["summary"]["overall"]["means"]["hit@1"] == 1.0


def test_a_relative_command_runs_in_the_config_folder(tmp_path):
    write_gold(tmp_path)
    (tmp_path / "chunks.txt").write_text("c1 c2 c3\n")
    write_script(tmp_path, "retrieve.py", """
        import json, sys
        chunks = open("chunks.txt").read().split()  # relative: the config file's folder
        for line in sys.stdin:
            q = json.loads(line)
            n = q["question"].split()[-1]
            hits = [{"id": c, "score": 1.0} for c in chunks if c == "c" + n]
            print(json.dumps({"id": q["id"], "results": hits or [{"id": "x", "score": 0.1}]}), flush=True)
    """)
    write_config(tmp_path, 'type = "command"\ncommand = ["./retrieve.py"]\n')
    sub = tmp_path / "build"
    sub.mkdir()
    out = cli("run", "--out", "run.json", cwd=sub)
    assert out.returncode == 0, out.stderr
    assert artefact(sub)["summary"]["overall"]["means"]["hit@1"] == 1.0


def test_an_underscore_table_named_with_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ci_eval]\ngold_set = "gold.json"\nk = 1\n')
    out = cli("check", "--config", "pyproject.toml", cwd=tmp_path)
    assert out.returncode == 2 and "(did you mean [tool.ci-eval]?)" in out.stderr
