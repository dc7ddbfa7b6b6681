"""`ci-eval run --repeat N` as a real process, with a retriever that is steady for some
questions and not for others (tests/support/flaky_retriever.py): the counts recorded are
the ones its rule implies."""

import json
import math
import os
import subprocess
import sys

import flaky_retriever
import pytest
from run_files import read_run
from suite_paths import SUPPORT

QUESTIONS = {"q1": "steady one", "q2": "shuffle two", "q3": "flip three", "q4": "steady four", "q5": "shuffle five"}
K, DEPTH = 1, 3


def cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(SUPPORT), "FLAKY_PASSES_DIR": str(cwd / "passes")}
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=120)


def project(tmp_path, extra=""):
    (tmp_path / "passes").mkdir()
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": qid, "question": text, "gold": ["alpha"]} for qid, text in QUESTIONS.items()]}))
    (tmp_path / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = {K}\n[retriever]\ntype = "python"\n'
        f'target = "flaky_retriever:flaky"\nconcurrency = 1\n{extra}')
    return tmp_path


def expected_flapping(passes: int) -> list:
    """[id, passes whose ranking differed, passes whose gold rank or hit@k differed], from
    the retriever's own rule."""
    out = []
    for qid, text in QUESTIONS.items():
        first = flaky_retriever.ranking_for(text, 1)[:DEPTH]
        later = [flaky_retriever.ranking_for(text, n)[:DEPTH] for n in range(2, passes + 1)]
        rank = first.index("alpha") + 1
        ranking = sum(r != first for r in later)
        outcome = sum((r.index("alpha") + 1, r.index("alpha") < K) != (rank, rank <= K) for r in later)
        if ranking:
            out.append([qid, ranking, outcome])
    return out


@pytest.mark.parametrize("passes", [2, 3])
def test_repeat_records_which_questions_changed(tmp_path, passes):
    project(tmp_path)
    out = cli("run", "--repeat", str(passes), "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    art = read_run(tmp_path / "run.json")
    flapping = expected_flapping(passes)
    assert art["repeat"] == {"passes": passes, "questions": len(QUESTIONS), "changed": len(flapping),
                             "flapping": flapping}
    # The recorded rows are the first pass's.
    assert {q["id"]: q["first_gold_rank"] for q in art["questions"]} == {
        qid: flaky_retriever.ranking_for(text, 1).index("alpha") + 1 for qid, text in QUESTIONS.items()}
    assert (f"Retriever is non-deterministic: {len(flapping)} of {len(QUESTIONS)} questions changed "
            f"across {passes} passes") in out.stdout


def test_repeat_goes_past_the_cache(tmp_path):
    project(tmp_path, '[index]\nversion = "v1"\n')
    out = cli("run", "--repeat", "3", "--cache", "cache", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    art = read_run(tmp_path / "run.json")
    assert art["repeat"]["flapping"] == expected_flapping(3)
    assert art["cache"] == {"hits": 0, "misses": len(QUESTIONS)}


def test_a_run_without_repeat_records_none(tmp_path):
    project(tmp_path)
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "repeat" not in read_run(tmp_path / "run.json")
    assert "deterministic" not in out.stdout


@pytest.mark.parametrize("value", ["1", "0", "21", "two", "-3"])
def test_a_bad_repeat_is_one_line_and_exit_2(tmp_path, value):
    project(tmp_path)
    out = cli("run", "--repeat", value, "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "--repeat" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "run.json").exists() and not list((tmp_path / "passes").iterdir())


def test_the_comment_names_a_non_deterministic_retriever_and_marks_its_flapping_regression(tmp_path):
    from ci_eval.core.report.render_sections import FLAPPING_MARK

    questions = {"q1": "steady one", "q2": "blink two"}
    base, head = tmp_path / "base", tmp_path / "head"
    for folder in (base, head):
        folder.mkdir()
        project(folder)
        (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
            {"id": qid, "question": text, "gold": ["alpha"]} for qid, text in questions.items()]}))
    assert cli("run", "--out", "base.json", "--quiet", cwd=base).returncode == 0
    # head's recorded pass is the retriever's second for "blink": gold last, a regression at k=1;
    # its next pass finds the gold first again, so the question flaps
    digest = __import__("hashlib").sha256(b"blink two").hexdigest()[:16]
    (head / "passes" / digest).write_text(".")
    out = cli("run", "--repeat", "2", "--out", "head.json", "--quiet", cwd=head)
    assert out.returncode == 0, out.stderr
    assert read_run(head / "head.json")["repeat"]["flapping"] == [["q2", 1, 1]]
    comment = cli("compare", str(base / "base.json"), "head.json", "--no-config", cwd=head).stdout
    assert "retriever is non-deterministic: 1 of 2 questions changed across 2 passes" in comment
    regressed = [line for line in comment.splitlines() if "q2" in line and FLAPPING_MARK in line]
    assert len(regressed) == 1
    assert not [line for line in comment.splitlines() if "q1" in line and FLAPPING_MARK in line]


def test_repeated_parts_merge_to_the_repeat_record_of_the_whole_run(tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    for folder in (whole, parts):
        folder.mkdir()
        project(folder)
    assert cli("run", "--repeat", "3", "--out", "run.json", "--quiet", cwd=whole).returncode == 0
    for n in (1, 2):
        out = cli("run", "--repeat", "3", "--shard", f"{n}/2", "--out", f"part-{n}.json", "--quiet", cwd=parts)
        assert out.returncode == 0, out.stderr
    out = cli("merge", "part-1.json", "part-2.json", "--out", "merged.json", cwd=parts)
    assert out.returncode == 0, out.stderr
    assert read_run(parts / "merged.json")["repeat"] == read_run(whole / "run.json")["repeat"]
    assert read_run(parts / "merged.json")["repeat"]["flapping"] == expected_flapping(3)


def test_parts_repeated_unlike_each_other_are_refused_by_merge(tmp_path):
    project(tmp_path)
    assert cli("run", "--repeat", "2", "--shard", "1/2", "--out", "part-1.json", "--quiet", cwd=tmp_path).returncode == 0
    assert cli("run", "--shard", "2/2", "--out", "part-2.json", "--quiet", cwd=tmp_path).returncode == 0
    out = cli("merge", "part-1.json", "part-2.json", "--out", "merged.json", cwd=tmp_path)
    assert out.returncode == 2 and "--repeat" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "merged.json").exists()


FAILING = {"q1": "steady one", "q2": "fails two", "q3": "shuffle three", "q4": "fails four"}


def _failing_project(folder):
    project(folder)
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": qid, "question": text, "gold": ["alpha"]} for qid, text in FAILING.items()]}))
    return folder


def test_a_retriever_failure_in_a_repeated_pass_fails_the_run(tmp_path):
    _failing_project(tmp_path)
    out = cli("run", "--repeat", "3", "--out", "run.json", "--quiet", cwd=tmp_path)
    assert out.returncode == 4, out.stderr
    failing = [qid for qid, text in FAILING.items() if "fails" in text]
    (line,) = out.stderr.splitlines()
    assert line.startswith(f"ci-eval: error: the retriever failed on {len(failing)} question(s) in a repeated "
                           f"pass (run --repeat); first: {failing[0]}: ")
    assert flaky_retriever.FAILURE in line and line.endswith("see run.json")
    art = read_run(tmp_path / "run.json")
    # the recorded pass answered every question; the failures are the further passes'
    assert all(q["error"] is None for q in art["questions"])
    assert art["repeat"]["failed"]["questions"] == len(failing)
    assert art["repeat"]["failed"]["first"][0] == failing[0]
    assert flaky_retriever.FAILURE in art["repeat"]["failed"]["first"][1]


def test_a_failure_in_a_repeated_part_fails_the_merge_too(tmp_path):
    _failing_project(tmp_path)
    for n in (1, 2):
        cli("run", "--repeat", "2", "--shard", f"{n}/2", "--out", f"part-{n}.json", "--quiet", cwd=tmp_path)
    out = cli("merge", "part-1.json", "part-2.json", "--out", "merged.json", cwd=tmp_path)
    assert out.returncode == 4, out.stderr
    merged = read_run(tmp_path / "merged.json")["repeat"]["failed"]
    failing = [qid for qid, text in FAILING.items() if "fails" in text]
    assert merged["questions"] == len(failing) and merged["first"][0] == failing[0]
    assert "in a repeated pass (run --repeat); first: " + failing[0] in out.stderr


def test_a_run_that_failed_in_a_repeated_pass_fails_the_gate_of_compare_whole_or_merged(tmp_path):
    """The one definition of a failed run (core/artefact/run_failure.py) applied by every
    reader: `run` and `merge` exit 4, and `compare` fails the gate on what they wrote, though
    every recorded answer is there."""
    _failing_project(tmp_path)
    failing = [qid for qid, text in FAILING.items() if "fails" in text]

    def fresh_passes():  # the retriever counts each question's passes; start them again
        for path in (tmp_path / "passes").iterdir():
            path.unlink()

    assert cli("run", "--repeat", "2", "--out", "head.json", "--quiet", cwd=tmp_path).returncode == 4
    fresh_passes()
    for n in (1, 2):
        cli("run", "--repeat", "2", "--shard", f"{n}/2", "--out", f"part-{n}.json", "--quiet", cwd=tmp_path)
    assert cli("merge", "part-1.json", "part-2.json", "--out", "merged.json", cwd=tmp_path).returncode == 4
    fresh_passes()
    assert cli("run", "--out", "base.json", "--quiet", cwd=tmp_path).returncode == 0

    for head in ("head.json", "merged.json"):
        out = cli("compare", "base.json", head, "--json-out", f"{head}.report.json", cwd=tmp_path)
        assert out.returncode == 1, out.stdout + out.stderr
        verdict = next(line for line in out.stdout.splitlines() if line.startswith("### "))
        assert verdict.startswith(f"### ❌ The retriever failed on {len(failing)} question(s) in a repeated pass "
                                  f"(run --repeat); first: {failing[0]}: ")
        report = json.loads((tmp_path / f"{head}.report.json").read_text())
        [errors] = [r for r in report["gate"]["rules"] if r["rule"] == "errors"]
        assert errors["status"] == "failed" and errors["questions"] == [failing[0]]


@pytest.mark.parametrize("kind", ["blink", "flip"])
def test_a_drop_only_on_questions_that_flap_across_passes_is_not_significant(tmp_path, kind):
    """Ten questions lose their gold chunk at k=1 between base and head. "blink" questions
    find it again in head's repeated pass: their loss could be the retriever's own noise,
    so the tests count them as unchanged and a max_drop breach is within noise. "flip"
    questions miss it in every later pass: a steady loss, which fails the gate."""
    questions = {f"q{i:02d}": f"{kind} {i}" for i in range(10)} | {"q10": "steady ten", "q11": "steady eleven"}
    project(tmp_path, '[gate]\nmax_drop = { "hit@1" = 0.05 }\n')
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": qid, "question": text, "gold": ["alpha"]} for qid, text in questions.items()]}))
    # base is every question's first pass (gold first); head's recorded pass is the second
    # (gold last for both kinds), its repeated pass the third (blink: first again; flip: last)
    assert cli("run", "--out", "base.json", "--quiet", cwd=tmp_path).returncode == 0
    assert cli("run", "--repeat", "2", "--out", "head.json", "--quiet", cwd=tmp_path).returncode == 0
    flapping = read_run(tmp_path / "head.json")["repeat"]["flapping"]
    assert flapping == ([[f"q{i:02d}", 1, 1] for i in range(10)] if kind == "blink" else [])
    out = cli("compare", "base.json", "head.json", "--json-out", "report.json", cwd=tmp_path)
    report = json.loads((tmp_path / "report.json").read_text())
    test = next(m["test"] for m in report["metrics"] if m["metric"] == "hit@1")
    assert (test["lost"], test["gained"], test["delta"]) == (10, 0, -10 / 12)  # every loss still counted
    if kind == "flip":
        assert "ties" not in test and test["p_drop"] == 1 / 2 ** 10  # the gate's exact one-sided test
        assert test["p_value"] == pytest.approx(math.erfc(math.sqrt(5)))  # McNemar's score, 10 / sqrt(10)
        assert out.returncode == 1, out.stdout + out.stderr
        assert "hit@1 fell 1.000 → 0.167" in out.stdout
    else:
        assert test["ties"] == 10 and test["p_value"] == 1.0 and not test["significant"]
        assert out.returncode == 0, out.stdout + out.stderr
        assert "10 flapping across repeated passes counted as unchanged" in out.stdout
        assert ("The tests count 10 questions as unchanged: the retriever alone changed their outcome "
                "between repeated passes (`--repeat`).") in out.stdout
