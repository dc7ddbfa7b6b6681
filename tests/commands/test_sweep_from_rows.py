"""`ci-eval sweep --from` tabulates one sweep's every row or refuses: a missing row is named
by its number and fails (exit 2), and rows an earlier, longer sweep left in the folder are
never tabulated beside the new ones. Real project, real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from projects import cli, write_config, write_gold, write_module

RETRIEVER = '''
def search(question, depth, mode="a"):
    n = question.split()[-1]
    found = [("c" + n, 2.0)] if mode != "miss" else []
    return found + [("x" + n, 1.0)]
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_gold(tmp_path, [{"id": f"a{i}", "question": f"answerable {i}", "gold": [f"c{i}"]} for i in range(1, 6)])
    write_module(tmp_path, "ranker", RETRIEVER)
    write_config(tmp_path, 'type = "python"\ntarget = "ranker:search"\n', k=1)
    return tmp_path


def _row(project: Path, grid: str, row: int) -> None:
    done = cli("sweep", "--grid", grid, "--row", str(row), "--out", f"rows/row-{row}.json", cwd=project)
    assert done.returncode == 0, done.stderr


def test_a_missing_row_is_named_by_its_number_and_fails(project):
    grid = "params.mode=a,miss,b"
    for row in (1, 3):  # row 2's matrix job failed and uploaded nothing
        _row(project, grid, row)

    done = cli("sweep", "--from", "rows", cwd=project)

    assert done.returncode == 2, done.stdout
    assert done.stderr.splitlines() == [
        "ci-eval: error: rows:--from: row 2 of the 3-row sweep is missing (a row whose job failed uploads "
        "nothing): run it again, or tabulate a folder of every row"]
    assert done.stdout == ""
    _row(project, grid, 2)
    table = cli("sweep", "--from", "rows", "--format", "json", cwd=project)
    assert table.returncode == 0, table.stderr
    assert [(r["row"], r["label"]) for r in json.loads(table.stdout)["rows"]] == [
        (1, "params.mode=a"), (2, "params.mode=miss"), (3, "params.mode=b")]


def test_rows_an_earlier_longer_sweep_left_are_not_tabulated_beside_the_new_ones(project):
    first = cli("sweep", "--grid", "params.mode=a,miss,b,c", "--dir", "rows", cwd=project)
    assert first.returncode == 0, first.stderr
    again = cli("sweep", "--grid", "params.mode=a,b,miss", "--dir", "rows", cwd=project)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in (project / "rows").glob("*.json")) == [f"row-0{n}.json" for n in range(1, 5)]

    done = cli("sweep", "--from", "rows", cwd=project)

    assert done.returncode == 2, done.stdout
    assert done.stderr.splitlines() == [
        "ci-eval: error: rows:--from: holds the rows of more than one sweep (row-01.json, row-02.json, row-03.json "
        "of a 3-row sweep; row-04.json of a 4-row sweep): tabulate one sweep's rows, removing the others' files"]
    (project / "rows" / "row-04.json").unlink()
    table = cli("sweep", "--from", "rows", "--format", "json", cwd=project)
    assert table.returncode == 0, table.stderr
    assert [r["label"] for r in json.loads(table.stdout)["rows"]] == ["params.mode=a", "params.mode=b", "params.mode=miss"]
