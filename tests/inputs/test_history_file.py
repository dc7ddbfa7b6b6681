"""inputs/history_file.py: a run read for the history, of each row only the fields it uses
checked; the others passed over, so a file ``ci-eval compare`` refuses for one of them is
read, and one it refuses for a field the history uses steps aside to the full reader."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from history_files import edit_row, write_runs

from ci_eval.core.artefact.question_row import history_facts
from ci_eval.core.compare.history import MISSED, RANK_CAP, gold_keys
from ci_eval.errors import InputError
from ci_eval.inputs.artefact_file import read_run
from ci_eval.inputs.history_file import read_run_rows

PLAN = {"q": [1], "r": [None], "s": [4]}


def one_run(tmp_path):
    return write_runs(tmp_path, PLAN, tags={"q": ["a"], "r": ["a", "b"]})[0]


def file_rows(path) -> list[list]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line.strip().removesuffix(",")) for line in lines if line.startswith("  [")]


def test_the_columns_are_what_each_row_says(tmp_path):
    path = one_run(tmp_path)
    edit_row(path, "s", "unanswerable", True)
    edit_row(path, "q", "first_gold_rank", 10**40)  # any size is a rank; past int16 all are one
    edit_row(path, "r", "metrics", [])  # measured nothing
    header, columns = read_run_rows(path)
    metrics = header["metrics"]
    facts = [history_facts(row, metrics) for row in file_rows(path)]
    assert columns.metrics == tuple(metrics) and columns.ids == [f[0] for f in facts]
    assert columns.tags == [tuple(f[1]) for f in facts]
    assert columns.gold.tolist() == [gold_keys([c for c, _ in f[2]], [g for _, g in f[2]], [0, len(f[2])])[0]
                                     for f in facts]
    assert columns.unanswerable.tolist() == [f[3] for f in facts] == [False, False, True]
    assert columns.first_rank.tolist() == [MISSED if f[4] is None else min(f[4], RANK_CAP) for f in facts]
    expected = [[np.float32(v.get(m, math.nan)) for m in metrics] for v in (f[5] for f in facts)]
    assert np.array_equal(columns.values, np.array(expected, dtype=np.float32), equal_nan=True)


# Fields history never reads: a value the schema or the meaning checks refuse there is read.
PASSED_OVER = [
    ("ranking", [["g", 2.0], ["g", 1.0]]),  # a chunk ranked twice
    ("ranking", "not a list"),
    ("ranking", [["g", 10**400]]),  # a score past a float's range
    ("question", 7),
    ("status", "exploded"),
    ("stale", [1]),
    ("latency_ms", -1),
    ("top_score", "high"),
    ("warnings", "none"),
]


@pytest.mark.parametrize("field, value", PASSED_OVER)
def test_a_field_history_passes_over_is_not_checked(tmp_path, field, value):
    path = one_run(tmp_path)
    edit_row(path, "r", field, value)
    with pytest.raises(InputError):
        read_run(path)  # compare refuses the file
    _, columns = read_run_rows(path)
    assert columns.ids == list(PLAN)


def test_a_row_s_positions_past_its_first_gold_rank_are_not_read(tmp_path):
    path = one_run(tmp_path)
    text = path.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith('  ["r",'))
    row = json.loads(line.strip().removesuffix(","))
    cut = json.dumps(row[:9] + ["one more"] * 10, separators=(",", ":"))
    path.write_text(text.replace(line.strip().removesuffix(","), cut), encoding="utf-8")
    with pytest.raises(InputError):
        read_run(path)
    _, columns = read_run_rows(path)
    assert columns.ids == list(PLAN)


# Fields history reads: a value the schema or the meaning checks refuse steps aside.
USED = [
    ("id", ""),
    ("id", "q"),  # a question id twice
    ("tags", ["a", 1]),
    ("gold", [["g", 1], ["g", 2]]),  # a chunk named twice
    ("gold", [["g", 1001]]),  # a grade past the gold set's bounds
    ("unanswerable", "no"),
    ("first_gold_rank", 0),
    ("metrics", [1.5] + [1] * 9),  # out of [0, 1]
    ("metrics", [1] * 9),  # a value short of one per metric name
]


@pytest.mark.parametrize("field, value", USED)
def test_a_malformed_field_history_uses_steps_aside_to_the_full_reader(tmp_path, field, value):
    path = one_run(tmp_path)
    edit_row(path, "r", field, value)
    assert read_run_rows(path) is None
    with pytest.raises(InputError):
        read_run(path)  # the reader that words it refuses it too


def _edit_key(path, key: str, edit) -> None:
    """Change the value of one of the artefact's keys (a line each in the writer's layout)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(f' "{key}": '))
    text = lines[at].rstrip("\n")
    comma = text.endswith(",")
    value = json.loads(text.split(": ", 1)[1].removesuffix(","))
    edit(value)
    lines[at] = f' "{key}": {json.dumps(value, separators=(",", ":"))}' + ("," if comma else "") + "\n"
    path.write_text("".join(lines), encoding="utf-8")


def test_the_head_is_checked_as_compare_checks_it_but_not_the_counts_it_states(tmp_path):
    path = one_run(tmp_path)
    _edit_key(path, "summary", lambda summary: summary["overall"].update(count=4))
    with pytest.raises(InputError):
        read_run(path)
    assert read_run_rows(path) is not None  # a count the artefact states is not held to its rows
    _edit_key(path, "summary", lambda summary: summary["overall"]["means"].update({"hit@5": 7}))
    assert read_run_rows(path) is None  # a mean out of range is refused, as compare refuses it
    (tmp_path / "named").mkdir()
    path = one_run(tmp_path / "named")
    _edit_key(path, "metrics", lambda names: names.__setitem__(0, "Hit@5"))
    assert read_run_rows(path) is None  # a metric name ci-eval does not write
