"""`ci-eval run`, `check` and `demo` end to end, as real processes."""

import json
import os
import re
import subprocess
import sys

from run_files import read_run
from suite_paths import SUPPORT


def cli(*args, cwd, env=None):
    full_env = {**os.environ, "PYTHONPATH": str(SUPPORT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=cwd, capture_output=True,
                          text=True, env=full_env, timeout=120)


def project(tmp_path, retriever, extra=""):
    (tmp_path / "gold.json").write_text(json.dumps({
        "schema_version": 1, "index_version": "idx-1",
        "questions": [
            {"id": "q1", "question": "alpha please", "gold": ["alpha"], "tags": ["greek"]},
            {"id": "q2", "question": "beta please", "gold": {"beta": 2, "retired": 1}},
            {"id": "q3", "question": "zeta please", "gold": ["retired"]},
            {"id": "q4", "question": "boom omega", "gold": [], "unanswerable": True},
        ]}))
    (tmp_path / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = 1\nabstain_below = 0.9\n{extra}\n[retriever]\n{retriever}\n'
        '[index]\ncallable = "fake_retrievers:manifest"\n')
    return tmp_path


def test_run_writes_artefact_and_summary(tmp_path):
    project(tmp_path, 'type = "python"\ntarget = "fake_retrievers:lexical"')
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    art = read_run(tmp_path / "run.json")
    q = {e["id"]: e for e in art["questions"]}
    assert q["q1"]["first_gold_rank"] == 1 and q["q1"]["metrics"]["hit@1"] == 1.0
    # "retired" is not in the index: stale, removed from q2's gold, q3 left with none.
    assert q["q2"]["stale"] == ["retired"] and q["q3"]["status"] == "stale"
    # One chunk id ("retired"), cited by two questions: one stale label to fix.
    assert art["summary"]["stale"] == {"questions": 1, "ids": 1}
    assert art["index"] == {"version": "idx-2", "ids": 5, "checked": True}
    assert len(q["q1"]["ranking"]) == 3  # depth 3k
    assert "index drift" in out.stdout and "idx-1" in out.stdout


def test_same_inputs_same_bytes_apart_from_time(tmp_path):
    project(tmp_path, 'type = "python"\ntarget = "fake_retrievers:lexical"')
    cli("run", "--out", "a.json", "--quiet", cwd=tmp_path)
    cli("run", "--out", "b.json", "--quiet", cwd=tmp_path)

    def strip(name):
        art = read_run(tmp_path / name)
        art.pop("created_at")
        for q in art["questions"]:
            q.pop("latency_ms")
        art["summary"].pop("latency_ms")
        return json.dumps(art, sort_keys=True)

    assert strip("a.json") == strip("b.json")


def test_retriever_failure_exits_4_and_records_errors(tmp_path):
    project(tmp_path, 'type = "python"\ntarget = "fake_retrievers:failing"')
    (tmp_path / "gold.json").write_text((tmp_path / "gold.json").read_text().replace("alpha please", "boom alpha"))
    out = cli("run", "--out", "run.json", "--quiet", cwd=tmp_path)
    assert out.returncode == 4
    # q1 and the unanswerable q4 ("boom omega"): a failure on an unanswerable question is
    # an error too, never an abstention.
    assert "the retriever failed on 2 question(s)" in out.stderr
    art = read_run(tmp_path / "run.json")
    assert art["summary"]["errors"] == 2


def test_command_retriever_end_to_end(tmp_path):
    script = SUPPORT / "fake_retrievers.py"
    project(tmp_path, f'type = "command"\ncommand = ["{sys.executable}", "{script}", "ok"]')
    out = cli("run", "--out", "run.json", "--quiet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert read_run(tmp_path / "run.json")["summary"]["overall"]["means"]["hit@1"] == 1.0


def test_check_lists_stale_ids(tmp_path):
    project(tmp_path, 'type = "python"\ntarget = "fake_retrievers:lexical"')
    out = cli("check", cwd=tmp_path)
    assert out.returncode == 1
    assert "question 'q2': stale gold id(s): retired" in out.stdout
    assert "1 distinct stale gold id(s) in 2 question(s)" in out.stdout  # "retired", twice


def test_bad_config_exit_2_one_line_no_traceback(tmp_path):
    project(tmp_path, 'type = "python"\ntarget = "fake_retrievers:lexical"', extra='metrics = ["hit@x"]')
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ci-eval: error: ci-eval.toml:metrics[0]:")
    assert "Traceback" not in out.stderr and not (tmp_path / "run.json").exists()


def test_version_and_help_have_examples(tmp_path):
    from ci_eval import __version__

    assert cli("--version", cwd=tmp_path).stdout.strip() == f"ci-eval {__version__}"
    for command in ("run", "check", "demo"):
        out = cli(command, "--help", cwd=tmp_path).stdout
        assert re.search(r"^examples?:\n  ci-eval ", out, re.M), out


def test_run_help_says_the_retriever_gets_depth_not_k(tmp_path):
    text = " ".join(cli("run", "--help", cwd=tmp_path).stdout.split())
    assert "asked for `depth` results per question, not k" in text
    assert "fn(question, depth, **params)" in text and '"k": depth' in text


def test_the_python_retriever_receives_depth(tmp_path):
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": "q1", "question": "x", "gold": ["c1"]}]}))
    (tmp_path / "retriever.py").write_text("def search(question, depth):\n"
                                           "    return [('c%d' % i, 1.0 / i) for i in range(1, depth + 5)]\n")
    (tmp_path / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 5\n[retriever]\ntype = "python"\n'
                                           'target = "retriever:search"\n')
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    art = read_run(tmp_path / "run.json")
    assert art["config"]["retriever"]["depth"] == 3 * 5
    assert len(art["questions"][0]["ranking"]) == 3 * 5  # asked for 19 ids, cut to depth
