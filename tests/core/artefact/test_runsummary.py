"""Warnings reach the terminal: counted per kind in a few lines, never only in the JSON
and never one line per question. Real projects, real CLI."""

from __future__ import annotations

import json

from factories import artefact as built_artefact
from factories import spec
from projects import cli, questions, write_config, write_gold, write_module

from ci_eval.core.artefact.question_row import to_row
from ci_eval.core.artefact.run_columns import RunColumns
from ci_eval.core.artefact.run_head import read_run_head, run_totals
from ci_eval.core.artefact.runsummary import run_summary

RETRIEVER = """
def search(question, depth):
    n = int(question.split()[-1]) if question.startswith("answerable") else 0
    if n == 1:
        return [("c1", 3.0), ("c1", 2.0), ("c1", 1.0), ("x", 0.5)]  # duplicates
    if n == 2:
        return [("c2", 1.0)]  # fewer than depth
    if n == 3:
        return []  # nothing at all
    return [("ghost-%d" % i, 1.0 / (i + 1)) for i in range(depth)]  # ids not in the index
"""


def test_warnings_are_summarised_on_the_terminal(tmp_path):
    write_gold(tmp_path, questions(5, 1))
    write_module(tmp_path, "retriever", RETRIEVER)
    (tmp_path / "index.txt").write_text("c1\nc2\nc3\nc4\nx\n")  # c5 is gone: a stale gold id
    write_config(tmp_path, 'type = "python"\ntarget = "retriever:search"\n',
                 extra='[index]\nmanifest = "index.txt"\n')
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    warnings = [line for line in lines if line.startswith("warning:")]
    assert warnings == [
        "warning: 1 question(s): duplicate id(s) dropped (a1)",
        "warning: 3 question(s): id(s) not in the index (a4, a5, u1)",
        "warning: 1 answerable question(s) got no result at all (a3)",
        # a1 kept 2 distinct ids of the 3 asked for, a2 got 1
        "warning: 2 question(s) got fewer than the 3 results asked for (depth) (a1, a2)",
    ]
    assert ("stale gold: 1 distinct gold id(s) missing from the index, in 1 question(s) (a5); "
            "1 question(s) left with no relevant live gold are kept out of the means") in lines


def test_a_question_missing_from_a_run_file(tmp_path):
    write_gold(tmp_path, questions(3, 0))
    (tmp_path / "run.jsonl").write_text(
        json.dumps({"id": "a1", "results": [{"id": "c1", "score": 1.0}]}) + "\n")
    write_config(tmp_path, 'type = "run-file"\npath = "run.jsonl"\n')
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "warning: 2 question(s): not in the run file (a2, a3)" in out.stdout.splitlines()
    assert "warning: 2 answerable question(s) got no result at all (a2, a3)" in out.stdout.splitlines()


def summary_of(art: dict) -> str:
    """The terminal summary of an artefact made in memory: its rows through the columns a
    run gathers as it writes them."""
    columns = RunColumns(art["metrics"], art["abstain_below"], art["k"])
    for q in art["questions"]:
        columns.add(to_row(q, art["metrics"]))
    return run_summary(run_totals(read_run_head(art)), columns)


def test_the_terminal_summary_says_when_top_k_results_were_never_judged():
    art = built_artefact([spec("q1", ["a"], ["a", "b"])], k=2)
    art["summary"]["judged_at_k"] = {"k": 2, "mean": 1 / 2}
    assert f"judged@2: {1 / 2:.3f} (some top-2 results were never judged" in summary_of(art)
    art["summary"]["judged_at_k"] = {"k": 2, "mean": 1.0}
    assert "judged@2" not in summary_of(art)


def test_the_terminal_summary_names_the_first_few_and_counts_the_rest():
    qs = [spec(f"q{n}", ["a"], [], error="boom" if n < 5 else None) for n in range(6)]
    text = summary_of(built_artefact(qs, k=2))
    assert "retriever errors: 5 question(s); first: q0: boom" in text.splitlines()
    assert "warning: 1 answerable question(s) got no result at all (q5)" in text.splitlines()
    stale = built_artefact([spec(f"s{n}", ["a", "g"], ["a"], stale=["g"]) for n in range(5)], k=2)
    assert "in 5 question(s) (s0, s1, s2 and 2 more)" in summary_of(stale)
