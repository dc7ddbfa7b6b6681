"""`[answers]`: the end-to-end tools' real result files read through `ci-eval run` and
`ci-eval check` (tests/support/answer_tools.py makes them with the real packages, offline).

Each tool's test makes its output once (one process imports the tool) and checks every
question: matched by id, by metadata id or by exact text; the ambiguous and the unmatched
rows counted with the first named; the question the end-to-end run did not cover left
without a verdict, never counted wrong.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from answer_tools import (
    EXPECTED,
    GOLD,
    deepeval_python,
    make_deepeval,
    make_promptfoo,
    make_ragas,
    promptfoo_executable,
)
from projects import artefact, cli, write_gold, write_module

RETRIEVER = """
def search(question, depth):
    # "answerable N" finds chunk cN; everything else finds nothing relevant
    n = question.split()[-1]
    return [("c" + n, 2.0)] if question.startswith("answerable") else [("x", 1.0)]
"""


def _project(folder: Path, answers: str, gold=GOLD) -> Path:
    folder.mkdir(exist_ok=True)
    write_gold(folder, gold)
    write_module(folder, "search", RETRIEVER)
    (folder / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = 1\n\n{textwrap.dedent(answers)}\n[retriever]\ntype = "python"\n'
        'target = "search:search"\n')
    return folder


def _run(folder: Path):
    done = cli("run", "--out", "run.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    art = artefact(folder)
    return done, art, {q["id"]: q["answer_correct"] for q in art["questions"]}


def _check_join(done, art, verdicts, unmatched_first: str, ambiguous_first: str) -> None:
    """Every question as EXPECTED; the join's leftovers counted and named, aloud and recorded."""
    assert verdicts == EXPECTED
    rec = art["answers"]
    assert (rec["rows"], rec["matched"], rec["questions"]) == (5, 3, len(GOLD))
    # d1 and d2 have no verdict because their one answer was ambiguous; a4 had none at all
    assert rec["missing"] == {"count": 3, "first": "a4"}
    assert rec["unmatched"]["count"] == 1 and unmatched_first in rec["unmatched"]["first"]
    assert "'zz' is not in the gold set" in rec["unmatched"]["first"]
    assert rec["ambiguous"]["count"] == 1 and ambiguous_first in rec["ambiguous"]["first"]
    assert "is the text of d1, d2" in rec["ambiguous"]["first"]
    assert "answers: 3 of 6 gold questions have a verdict" in done.stdout
    assert "3 gold questions not covered by the end-to-end run (first: a4)" in done.stdout
    assert "1 result matched no gold question" in done.stdout
    assert "1 result matched several gold questions" in done.stdout


@pytest.mark.skipif(promptfoo_executable() is None,
                    reason="promptfoo is not installed (npm: .ci/run installs promptfoo@0.120.0 into .ci-node/)")
def test_promptfoo_results_read_through_the_cli(tmp_path):
    results = make_promptfoo(tmp_path)
    data = json.loads(results.read_text())
    # the file is promptfoo's own: its results list, one entry per test, one of them failed
    assert [e["success"] for e in data["results"]["results"]].count(False) == 2
    project = _project(tmp_path / "p", f'[answers]\ntype = "promptfoo"\npath = "{results}"\n')
    done, art, verdicts = _run(project)
    _check_join(done, art, verdicts, "results.results[", "results.results[")
    assert art["answers"]["type"] == "promptfoo" and art["answers"]["counts_as_correct"] == "a pass"
    assert art["config"]["answers"] == {"type": "promptfoo", "path": str(results)}


@pytest.mark.skipif(deepeval_python() is None,
                    reason="DeepEval is not installed: its releases since 3.0 require tabulate<0.10, which "
                           "the action's pins (tabulate==0.10.0) exclude; set CI_EVAL_DEEPEVAL_PYTHON to a "
                           "Python that has it")
def test_deepeval_test_run_read_through_the_cli(tmp_path):
    folder = make_deepeval(tmp_path)
    # the results folder as DeepEval leaves it: the newest test run is read
    project = _project(tmp_path / "p", f'[answers]\ntype = "deepeval"\npath = "{folder}"\n')
    done, art, verdicts = _run(project)
    _check_join(done, art, verdicts, "testCases[3]", "testCases[2]")
    # the metric's own verdict instead of the test case's: the same here, by its name
    project = _project(tmp_path / "q", f'[answers]\ntype = "deepeval"\npath = "{folder}"\n'
                                       'metric = "SameAnswer"\nthreshold = 1.0\n')
    done, art, verdicts = _run(project)
    _check_join(done, art, verdicts, "testCases[3]", "testCases[2]")
    assert art["answers"]["counts_as_correct"] == "SameAnswer ≥ 1"


@pytest.mark.filterwarnings("ignore")
def test_ragas_results_read_through_the_cli(tmp_path):
    pytest.importorskip("ragas", reason="ragas is in the test extra (pyproject.toml)")
    csv_file, jsonl_file = make_ragas(tmp_path)
    for results, place in ((csv_file, "row "), (jsonl_file, "line ")):
        project = _project(tmp_path / results.suffix[1:],
                           f'[answers]\ntype = "ragas"\npath = "{results}"\nmetric = "exact_match"\n'
                           "threshold = 1.0\n")
        done, art, verdicts = _run(project)
        _check_join(done, art, verdicts, place, place)
        assert art["answers"]["counts_as_correct"] == "exact_match ≥ 1"


def test_a_run_covering_part_of_the_gold_set_invents_nothing(tmp_path):
    """The team's command prints verdicts for two of six questions: two verdicts, four
    questions counted as not covered, and the matrix made of the two."""
    (tmp_path / "grade.py").write_text(
        "import json, os\n"
        "assert 'GITHUB_TOKEN' not in os.environ  # the same secret-free environment as every child\n"
        "print(json.dumps({'id': 'a1', 'correct': False}))\n"
        "print(json.dumps({'question': 'answerable 2', 'correct': True}))\n")
    project = _project(tmp_path, '[answers]\ntype = "command"\ncommand = ["python3", "grade.py"]\n')
    done = cli("run", "--out", "run.json", cwd=project, env={"GITHUB_TOKEN": "ghs_secret"})
    assert done.returncode == 0, done.stderr
    art = artefact(project)
    verdicts = {q["id"]: q["answer_correct"] for q in art["questions"]}
    assert verdicts == {"a1": False, "a2": True, "a3": None, "a4": None, "d1": None, "d2": None}
    assert art["answers"]["missing"] == {"count": 4, "first": "a3"}
    assert "4 gold questions not covered by the end-to-end run (first: a3)" in done.stdout
    compared = cli("compare", "run.json", "run.json", "--format", "json", cwd=project)
    matrix = json.loads(compared.stdout)["failure_matrix"]
    # a1 retrieved and wrong, a2 retrieved and correct; nothing counted for the other four
    assert matrix["head"] == {"retrieved_correct": 1, "retrieved_wrong": 1, "missed_wrong": 0, "missed_correct": 0}
    assert (matrix["known"], matrix["unknown"]) == (2, len(GOLD) - 2)
    assert matrix["source"]["type"] == "command" and matrix["source"]["command"] == ["python3", "grade.py"]


def test_repeats_follow_the_documented_rule(tmp_path):
    lines = [{"id": "a1", "correct": True}, {"id": "a1", "correct": False}, {"id": "a1", "correct": True},
             {"id": "a2", "correct": True}, {"id": "a2", "correct": True}]
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    expected = {"all": False, "majority": True, "any": True}  # a1: 2 of 3 verdicts correct
    for rule, a1 in expected.items():
        project = _project(tmp_path, f'[answers]\ntype = "jsonl"\npath = "answers.jsonl"\nrepeats = "{rule}"\n')
        done, art, verdicts = _run(project)
        assert (verdicts["a1"], verdicts["a2"]) == (a1, True), rule
        assert art["answers"]["repeated"] == {"questions": 2, "disagreeing": 1}
        assert f'2 questions answered more than once, 1 with verdicts that disagree (repeats = "{rule}")' in done.stdout


def test_check_reports_the_join_and_refuses_a_ragas_table_without_its_metric(tmp_path):
    (tmp_path / "scores.csv").write_text("user_input,response,faithfulness\nanswerable 1,x,0.9\n")
    project = _project(tmp_path, '[answers]\ntype = "ragas"\npath = "scores.csv"\nmetric = "answer_correctness"\n'
                                 "threshold = 0.5\n")
    done = cli("check", cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("ci-eval: error: scores.csv:row 2: no column 'answer_correctness'")
    assert "columns: user_input, response, faithfulness" in done.stderr
    (tmp_path / "scores.csv").write_text("user_input,response,answer_correctness\nanswerable 1,x,0.9\n"
                                         "answerable 2,y,\n")
    done = cli("check", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "answers: 1 of 6 gold questions have a verdict (answer_correctness ≥ 0.5)" in done.stdout
    assert "1 result had no verdict (first: row 3: the score is not a number (a2))" in done.stdout


def test_config_says_what_each_answers_type_needs(tmp_path):
    project = _project(tmp_path, '[answers]\ntype = "ragas"\npath = "r.csv"\nprovider = "echo"\n')
    done = cli("check", cwd=project)
    assert done.returncode == 2
    assert 'ci-eval.toml:answers: answers type "ragas" needs "metric"' in done.stderr
    assert 'ci-eval.toml:answers.provider: "provider" applies to answers type promptfoo, not "ragas"' in done.stderr
    project = _project(tmp_path, '[answers]\ntype = "promptfo"\npath = "r.json"\n')
    assert "answers.type" in cli("check", cwd=project).stderr
