"""The version 2 writer: the layout it promises, the same content as a plain dump, rows
that hold the writer's own separator, and a real run's artefact valid against the schema."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from run_files import read_run
from shard_helpers import run_to, write_project

from ci_eval.core.artefact import artefact_writer
from ci_eval.core.artefact.artefact_writer import artefact_pieces, compact
from ci_eval.core.artefact.question_row import QUESTION_FIELDS
from ci_eval.schemas import load

HEAD = {"schema_version": 2, "k": 1, "metrics": ["hit@1"], "tool": {"name": "ci-eval", "version": "0"}}


def row(qid: str, tags=()) -> tuple:
    return (qid, "why?", list(tags), False, "ok", [["g", 1]], [], [1.0], 1, 0.5, 1.25, None, 1.0, None, [],
            [["g", 0.5], ["h", 0.25]])


def text(rows, end=None) -> str:
    return "".join(artefact_pieces(HEAD, rows, lambda: end or {"summary": {"errors": 0}, "history": []}))


def test_the_layout_is_head_keys_sorted_then_a_row_a_line_then_the_end_keys():
    lines = text([row("q1"), row("q2")]).splitlines()
    assert lines == [
        "{",
        ' "k": 1,', ' "metrics": ["hit@1"],', f' "question_fields": {compact(list(QUESTION_FIELDS))},',
        ' "schema_version": 2,', ' "tool": {"name":"ci-eval","version":"0"},',
        ' "questions": [', f"  {compact(row('q1'))},", f"  {compact(row('q2'))}", " ],",
        ' "history": [],', ' "summary": {"errors":0}',
        "}",
    ]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", artefact_writer._SENTINEL, "\n", "é"]), max_size=3), max_size=600))
def test_any_rows_give_the_json_of_their_content(tags):
    """Rows are encoded in batches split by a sentinel; a row holding the sentinel itself
    (here in its tags) must come out the same as any other."""
    rows = [row(f"q{n}", t) for n, t in enumerate(tags)]
    written = text(rows)
    data = json.loads(written)
    assert data["questions"] == json.loads(json.dumps([list(r) for r in rows]))
    # one line each: "{", five head keys, "questions" opened, each row, closed, two end keys, "}"
    assert written.count("\n") == 1 + 5 + 1 + len(rows) + 1 + 2 + 1


def test_keys_on_the_wrong_side_of_the_rows_are_refused():
    with pytest.raises(ValueError, match="summary"):
        "".join(artefact_pieces({**HEAD, "summary": {}}, [], dict))
    with pytest.raises(ValueError, match="'k'"):
        text([], end={"k": 2})


def test_a_real_runs_artefact_is_valid_version_2_and_reads_as_version_1(tmp_path):
    config = write_project(tmp_path, [
        {"id": "q1", "question": "alpha please", "gold": ["alpha"], "tags": ["how-to"]},
        {"id": "q2", "question": "boom now", "gold": {"beta": 2, "retired": 1}},
        {"id": "u1", "question": "nothing", "gold": [], "unanswerable": True},
    ])
    path = run_to(config, tmp_path / "run.json")
    data = json.loads(path.read_text())
    errors = sorted(e.message for e in Draft202012Validator(load("artefact-v2")).iter_errors(data))
    assert errors == []
    assert [r[0] for r in data["questions"]] == ["q1", "q2", "u1"]
    assert read_run(path)["questions"][1]["gold"] == {"beta": 2, "retired": 1}
