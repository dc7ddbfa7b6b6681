"""The summary's counts, as `run` and `merge` write them and every reader checks them, by one
rule (core/artefact/artefact.in_means): a failed unanswerable question counts among the errors, never
in the overall or per-tag counts."""

from __future__ import annotations

import json

from projects import cli, questions, write_config, write_module

RAISES_ON_UNANSWERABLE = """
def search(question, depth):
    if question.startswith("unanswerable"):
        raise RuntimeError("the backend is down")
    return [("c" + question.split()[-1], 2.0)]
"""


def _project(tmp_path):
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": questions(8, 1)}))
    write_module(tmp_path, "raising", RAISES_ON_UNANSWERABLE)
    write_config(tmp_path, 'type = "python"\ntarget = "raising:search"')
    return tmp_path


def test_a_run_whose_unanswerable_question_fails_writes_what_compare_reads(tmp_path):
    root = _project(tmp_path)
    done = cli("run", "--quiet", "--out", "a.json", cwd=root)
    assert done.returncode == 4, done.stderr
    summary = json.loads((root / "a.json").read_text())["summary"]
    assert (summary["overall"]["count"], summary["errors"]) == (8, 1)
    assert summary["by_tag"]["t"]["count"] == 8
    compared = cli("compare", "--no-base", "a.json", "--no-config", cwd=root)
    # read and gated (a failed question fails the gate), not refused as bad input
    assert compared.returncode == 1 and compared.stdout, compared.stderr


def test_merged_parts_with_that_failure_are_read_by_compare(tmp_path):
    root = _project(tmp_path)
    for i in (1, 2):
        done = cli("run", "--quiet", "--shard", f"{i}/2", "--out", f"p{i}.json", cwd=root)
        assert done.returncode in (0, 4), done.stderr
    merged = cli("merge", "p1.json", "p2.json", "--out", "m.json", cwd=root)
    assert merged.returncode == 4, merged.stderr
    compared = cli("compare", "--no-base", "m.json", "--no-config", cwd=root)
    assert compared.returncode == 1 and compared.stdout, compared.stderr
