"""Every per-tag and per-question loop bounded before it runs on untrusted input, through the
real CLI: the gold set and the artefact held to one set of limits (core/limits.py), refused
at their place before any item is walked; `history` sizing a file before reading it."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

from factories import artefact, spec
from projects import GOOD_RETRIEVER, cli, questions, write_config, write_gold, write_module
from suite_paths import REPO_ROOT

from ci_eval.core.limits import MAX_ARTEFACT_BYTES, MAX_JUDGED, MAX_TAGS, MAX_TAGS_PER_QUESTION

PY = 'type = "python"\ntarget = "retriever:search"\n'


def project(folder, qs):
    write_gold(folder, qs)
    write_module(folder, "retriever", GOOD_RETRIEVER)
    write_config(folder, PY)


def errors(out) -> list[str]:
    return [line.removeprefix("ci-eval: error: ") for line in out.stderr.splitlines() if line.startswith("ci-eval: ")]


def refused_by_check_and_run(folder, expected: list[str]) -> None:
    """`check` and `run` refuse the gold set with exactly ``expected``, exit 2, writing nothing."""
    for command in (["check"], ["run", "--out", "run.json"]):
        out = cli(*command, cwd=folder)
        assert out.returncode == 2, out.stderr
        assert errors(out) == expected
    assert not (folder / "run.json").exists()


def test_a_question_of_a_million_tags_is_refused_at_its_place(tmp_path):
    qs = questions()
    qs[1]["tags"] = [f"t{i}" for i in range(10 ** 6)]
    project(tmp_path, qs)

    refused_by_check_and_run(tmp_path, [
        f"gold.json:question 'a2' (questions[1]).tags: holds 1,000,000 tags, over the limit of "
        f"{MAX_TAGS_PER_QUESTION} a question"])


def test_a_gold_set_the_artefact_would_refuse_is_refused_at_check(tmp_path):
    # At every limit: `run` writes it and `compare` takes what `run` wrote.
    qs = questions()
    qs[0]["tags"] = [f"t{i}" for i in range(MAX_TAGS_PER_QUESTION)]
    qs[2]["gold"] = {f"c{i}": 1 for i in range(1, MAX_JUDGED + 1)}
    project(tmp_path, qs)
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    compared = cli("compare", "run.json", "run.json", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    (tmp_path / "run.json").unlink()

    # One past: 51 tags, 1,001 judged chunks. Before, `check` and `run` passed and
    # `compare` then refused what `run` wrote (the push run left a baseline PRs skipped).
    qs[0]["tags"].append("one-more")
    qs[2]["gold"]["c0"] = 1
    project(tmp_path, qs)

    refused_by_check_and_run(tmp_path, [
        f"gold.json:question 'a1' (questions[0]).tags: holds {MAX_TAGS_PER_QUESTION + 1} tags, over the limit of "
        f"{MAX_TAGS_PER_QUESTION} a question",
        f"gold.json:question 'a3' (questions[2]).gold: holds {MAX_JUDGED + 1:,} judged chunks, over the limit of "
        f"{MAX_JUDGED:,} a question"])


def test_a_gold_set_of_more_distinct_tags_than_the_limit_is_refused_at_check(tmp_path):
    per_question = MAX_TAGS_PER_QUESTION
    count = MAX_TAGS // per_question + 1  # questions of tags of their own, past the limit
    qs = [{"id": f"a{i}", "question": f"answerable {i}", "gold": [f"c{i}"],
           "tags": [f"q{i}-t{j}" for j in range(per_question)]} for i in range(1, count + 1)]
    project(tmp_path, qs)

    refused_by_check_and_run(tmp_path, [
        f"gold.json:questions[*].tags: names {count * per_question:,} distinct tags, over the limit of "
        f"{MAX_TAGS:,} (the comparison tests each tag on each metric)"])


def _own_tags(count: int, per_question: int) -> list[dict]:
    return [spec(f"q{i}", ["g"], ["g" if i % 2 else "x", "y"], tags=[f"q{i}-t{j}" for j in range(per_question)])
            for i in range(count)]


def test_compare_refuses_an_artefact_of_too_many_tags_before_comparing_a_tag(tmp_path):
    # A fork's artefact of questions with 50 tags of their own each: every tag is tested on
    # every metric, a few milliseconds a tag, so 30,000 held the privileged poster for minutes.
    count = MAX_TAGS // MAX_TAGS_PER_QUESTION + 1
    specs = _own_tags(count, MAX_TAGS_PER_QUESTION)
    (tmp_path / "base.json").write_text(json.dumps(artefact(specs)), encoding="utf-8")
    (tmp_path / "head.json").write_text(json.dumps(artefact(specs, sha="b" * 40)), encoding="utf-8")

    out = cli("compare", "base.json", "head.json", cwd=tmp_path)

    assert out.returncode == 2, out.stderr
    tags = count * MAX_TAGS_PER_QUESTION
    assert errors(out) == [
        f"base.json:summary.by_tag: holds {tags:,} tags, over the limit of {MAX_TAGS:,}",
        f"base.json:questions: names {tags:,} distinct tags, over the limit of {MAX_TAGS:,}"]
    assert out.stdout == ""


def _limit_memory(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def test_history_sizes_a_file_before_reading_it(tmp_path):
    # A one-line file past the artefact's limit was read whole (a 1 GB one took 2.1 GB)
    # before the limit applied; here it is refused by its size within 1 GB of address space.
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(artefact([spec("q1", ["g"], ["g"])])), encoding="utf-8")
    size = MAX_ARTEFACT_BYTES + 512 * 1024 * 1024
    with open(folder / "big.json", "wb") as fh:
        fh.truncate(size)  # sparse: no disk, and no newline in it

    out = subprocess.run([sys.executable, "-m", "ci_eval", "history", str(folder)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False,
                         env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
                         preexec_fn=_limit_memory(1024 ** 3))

    assert out.returncode == 2, out.stderr
    assert errors(out) == [f"{folder / 'big.json'}: run artefact is {size:,} bytes, over the "
                           f"{MAX_ARTEFACT_BYTES:,}-byte limit"]


def test_evidence_judging_more_chunks_than_the_artefact_holds_is_refused_at_check(tmp_path):
    # A span over more chunks than a question may judge: `run` wrote an artefact `compare`
    # refused. One-character chunks, the span over one more of them than the limit.
    chunks = [{"id": f"c{i}", "doc": "d.md", "start": i, "end": i + 1} for i in range(MAX_JUDGED + 1)]
    (tmp_path / "index.jsonl").write_text("\n".join(map(json.dumps, [{"version": "v1"}, *chunks])) + "\n")
    (tmp_path / "run.jsonl").write_text(json.dumps({"id": "q1", "results": [["c0", 1.0]]}) + "\n")
    gold = [{"id": "q1", "question": "span?", "gold": [],
             "evidence": [{"doc": "d.md", "start": 0, "end": MAX_JUDGED + 1}]}]
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": gold}))
    (tmp_path / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "run-file"\n'
                                           'path = "run.jsonl"\n[index]\nmanifest = "index.jsonl"\n')

    refused_by_check_and_run(tmp_path, [
        f"gold.json:question 'q1'.evidence: its gold and evidence judge {MAX_JUDGED + 1:,} chunks, over the "
        f"limit of {MAX_JUDGED:,} a question"])
