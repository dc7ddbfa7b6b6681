"""`ci-eval check` validates everything a run needs short of calling the retriever, and
`run` does the same config-level checks before it calls it. Real projects, real CLI."""

from __future__ import annotations

import pytest
from projects import GOOD_RETRIEVER, cli, write_config, write_gold, write_module

from ci_eval.schemas import load

PY = 'type = "python"\ntarget = "retriever:search"\n'


def project(tmp_path, retriever=PY, extra="", k=1, source=GOOD_RETRIEVER):
    write_gold(tmp_path)
    write_module(tmp_path, "retriever", source)
    write_config(tmp_path, retriever, extra, k=k)


def error_lines(out) -> list[str]:
    return [line.removeprefix("ci-eval: error: ") for line in out.stderr.splitlines()]


def test_a_good_project_checks_ok(tmp_path):
    project(tmp_path)
    out = cli("check", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "ci-eval.toml: ok (python retriever, k=1, depth=3," in out.stdout


@pytest.mark.parametrize("source, fragment", [
    ("import not_installed_dependency_xyz\n", "cannot import 'retriever': it imports 'not_installed_dependency_xyz', "
                                              "which is not installed (install it in the environment that runs ci-eval)"),
    (None, "cannot import 'retriever': no module named 'retriever' (looked for in the config file's folder, "
           "then the installed packages)"),
])
def test_an_unimportable_target_is_bad_input(tmp_path, source, fragment):
    project(tmp_path)
    if source is None:
        (tmp_path / "retriever.py").unlink()
    else:
        (tmp_path / "retriever.py").write_text(source + GOOD_RETRIEVER)
    for command in (["check"], ["run", "--out", "run.json"]):
        out = cli(*command, cwd=tmp_path)
        assert out.returncode == 2, out.stderr
        assert error_lines(out) == [f"ci-eval.toml:retriever.target: {fragment}"]
    assert not (tmp_path / "run.json").exists()


def test_a_command_that_is_not_there(tmp_path):
    project(tmp_path, retriever='type = "command"\ncommand = ["no-such-retriever-xyz", "--serve"]\n')
    out = cli("check", cwd=tmp_path)
    assert out.returncode == 2
    assert error_lines(out) == ["ci-eval.toml:retriever.command[0]: retriever command 'no-such-retriever-xyz' "
                                "is not on PATH"]
    project(tmp_path, retriever='type = "command"\ncommand = ["./bin/retrieve"]\n')
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 2 and "ci-eval.toml:retriever.command[0]: retriever command './bin/retrieve' " \
                                   "not found" in out.stderr


def test_every_gate_problem_at_once_each_at_its_place(tmp_path):
    write_gold(tmp_path)
    write_module(tmp_path, "retriever", GOOD_RETRIEVER)
    write_config(tmp_path, PY, k=5, extra="""
        [gate]
        min = { "hit@5" = 60, "recal@5" = 0.5 }
        max_drop = { "ndcg@3" = 0.02, "mrr" = 1.5 }
        protected = ["a1", "a11"]
        tag_min = { tt = { "hit@5" = 0.5 } }
    """)
    for command in (["check"], ["run", "--out", "run.json"]):
        out = cli(*command, cwd=tmp_path)
        assert out.returncode == 2
        lines = error_lines(out)
        assert "ci-eval.toml:gate.min.hit@5: 60 is out of range: metrics are shares between 0 and 1, " \
               "not percents (for 60 % write 0.6)" in lines
        assert any(l.startswith("ci-eval.toml:gate.min.recal@5: unknown metric 'recal@5'") and "recall@5" in l
                   for l in lines), lines
        assert any(l.startswith("ci-eval.toml:gate.max_drop.ndcg@3: 'ndcg@3' is not measured")
                   and "did you mean 'ndcg@5'?" in l for l in lines), lines
        assert any(l.startswith("ci-eval.toml:gate.max_drop.mrr: 1.5 is out of range: metrics are shares")
                   for l in lines), lines
        assert len(lines) == 4  # the gold-set checks come after the config's own
    # with the config itself fixed, the names checked against the gold set
    (tmp_path / "ci-eval.toml").write_text((tmp_path / "ci-eval.toml").read_text()
                                            .replace('"hit@5" = 60, "recal@5" = 0.5', '"hit@5" = 0.6')
                                            .replace('"ndcg@3" = 0.02, "mrr" = 1.5', '"ndcg@5" = 0.02'))
    for command in (["check"], ["run", "--out", "run.json"]):
        out = cli(*command, cwd=tmp_path)
        assert out.returncode == 2
        assert error_lines(out) == [
            "ci-eval.toml:gate.protected[1]: question 'a11' is not in the gold set gold.json (did you mean 'a1'?)",
            "ci-eval.toml:gate.tag_min.tt: no question of the gold set has the tag 'tt' (did you mean 't'?); tags: t",
        ]
    assert not (tmp_path / "run.json").exists()


def test_run_checks_the_config_before_calling_the_retriever(tmp_path):
    marker = tmp_path / "called"
    project(tmp_path, extra='[gate]\nprotected = ["nope"]\n',
            source=f"def search(question, depth):\n    open({str(marker)!r}, 'w').close()\n    return []\n")
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 2 and "gate.protected[0]: question 'nope' is not in the gold set" in out.stderr
    assert not marker.exists() and not (tmp_path / "run.json").exists()


@pytest.mark.parametrize("retriever_extra, line", [
    ("params = { built = 2026-01-01 }\n",
     'ci-eval.toml:retriever.params.built: a TOML date/time (2026-01-01) cannot be passed to the retriever '
     'or recorded in the artefact; quote it: "2026-01-01"'),
    ("depth = 20.0\n", "ci-eval.toml:retriever.depth: expected a whole number, got 20.0 (write 20)"),
    ("concurrency = 2.5\n", "ci-eval.toml:retriever.concurrency: expected a whole number, got 2.5"),
    ("tagret = 'x:y'\n", "ci-eval.toml:retriever: unknown key 'tagret' (did you mean 'target'?) (allowed: "
                          + ", ".join(sorted(load("config")["properties"]["retriever"]["properties"])) + ")"),
])
def test_wrong_value_types_are_exit_2_at_load_for_check_and_run(tmp_path, retriever_extra, line):
    project(tmp_path, retriever=PY + retriever_extra)
    for command in (["check"], ["run", "--out", "run.json"]):
        out = cli(*command, cwd=tmp_path)
        assert out.returncode == 2, out.stderr
        assert error_lines(out) == [line]
    assert not (tmp_path / "run.json").exists()


def test_k_as_a_float_in_pyproject(tmp_path):
    write_gold(tmp_path)
    write_module(tmp_path, "retriever", GOOD_RETRIEVER)
    (tmp_path / "pyproject.toml").write_text('[tool.ci-eval]\ngold_set = "gold.json"\nk = 5.0\n'
                                             '[tool.ci-eval.retriever]\ntype = "python"\ntarget = "retriever:search"\n')
    out = cli("check", cwd=tmp_path)
    assert error_lines(out) == ["pyproject.toml:tool.ci-eval.k: expected a whole number, got 5.0 (write 5)"]
