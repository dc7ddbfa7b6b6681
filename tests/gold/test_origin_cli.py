"""Where a kept question came from, end to end: `gold mine` writes each candidate's origin,
the labelling page (a real `ci-eval label` process) records it when a person keeps one, and
`ci-eval run` + `ci-eval compare` show the metric by origin with nobody tagging."""

from __future__ import annotations

import json
import os
from pathlib import Path

from labelling import LabelProcess, post, write_project

from ci_eval.cli import main
from ci_eval.core.gold.candidates import candidate_id

ASKED = ["delta please", "delta please", "Delta please?", "beta please"]


def cli(cwd: Path, *args: str) -> int:
    here = os.getcwd()
    os.chdir(cwd)
    try:
        return main(list(args))
    finally:
        os.chdir(here)


def test_a_mined_question_kept_on_the_page_records_its_origin_and_the_comment_shows_it(tmp_path, capsys):
    project = write_project(tmp_path)
    (project / "asked.log").write_text("\n".join(ASKED) + "\n")
    assert cli(project, "gold", "mine", "asked.log", "--out", "mined.jsonl", "--no-gold") == 0
    rows = {r["question"]: r for r in map(json.loads, (project / "mined.jsonl").read_text().splitlines())}
    delta = rows["delta please"]
    assert delta["origin"] == {"kind": "mined", "log": "asked.log", "frequency": 3}

    kept = candidate_id("delta please")
    label = LabelProcess(project, "--chunks", "chunks.jsonl", "--candidates", "mined.jsonl")
    try:
        assert post(label, "/api/keep", {"candidate": kept})[0] == 200
        assert post(label, "/api/grade", {"question": kept, "chunk": "delta", "grade": 2, "seen": None})[0] == 200
    finally:
        label.kill()
    doc = json.loads((project / "gold.json").read_text())
    assert doc["provenance"]["judgements"][kept]["origin"] == delta["origin"]

    capsys.readouterr()
    assert cli(project, "run", "--out", "run.json", "--quiet") == 0
    artefact = json.loads((project / "run.json").read_text())
    tags = {row[0]: row[2] for row in artefact["questions"]}  # rows in the order of question_fields
    assert artefact["question_fields"][0] == "id" and artefact["question_fields"][2] == "tags"
    assert tags == {"q1": ["origin:written"], "q2": ["origin:written"], kept: ["origin:mined"]}
    assert cli(project, "compare", "run.json", "--no-base", "--no-config") in (0, 1)
    comment = capsys.readouterr().out
    assert "origin:mined" in comment and "origin:written" in comment
    # a gate may hold an origin as it holds a tag: `check` knows the tag as `run` does
    with (project / "ci-eval.toml").open("a") as fh:
        fh.write('[gate]\ntag_min = { "origin:mined" = { "mrr" = 0.1 } }\n')
    assert cli(project, "check") == 0


def test_a_gold_set_without_origins_gets_no_origin_tags(tmp_path):
    project = write_project(tmp_path)
    assert cli(project, "run", "--out", "run.json", "--quiet") == 0
    artefact = json.loads((project / "run.json").read_text())
    assert artefact["question_fields"][2] == "tags" and all(not row[2] for row in artefact["questions"])
