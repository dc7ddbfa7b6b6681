"""inputs/history_runs.py: a folder of real artefact files, read a run at a time."""

from __future__ import annotations

import pytest
from history_files import created_at, sha_of, write_runs

from ci_eval.errors import InputError
from ci_eval.inputs.history_runs import read_history


def test_runs_are_ordered_by_when_they_were_made_not_by_file_name(tmp_path):
    paths = write_runs(tmp_path, {"q": [1, None, 2, None, 3, None, 4]})
    assert sorted(p.name for p in paths) != [p.name for p in paths]
    history = read_history(tmp_path)
    assert [run.sha for run in history.runs] == [sha_of(r) for r in range(7)]
    assert [run.created_at for run in history.runs] == [created_at(r) for r in range(7)]
    assert history.lines()[0].ranks == (1, 0, 2, 0, 3, 0, 4)


def test_last_keeps_the_most_recent_runs(tmp_path):
    write_runs(tmp_path, {"q": [1, 2, 3, 4, 5]})
    history = read_history(tmp_path, last=2)
    assert [run.sha for run in history.runs] == [sha_of(3), sha_of(4)]
    assert history.lines()[0].ranks == (4, 5)


def test_progress_is_told_once_per_run(tmp_path):
    write_runs(tmp_path, {"q": [1, 2, 3]})
    told = []
    read_history(tmp_path, progress=lambda done, total, path: told.append((done, total)))
    assert told == [(1, 3), (2, 3), (3, 3)]


def test_a_broken_artefact_is_named(tmp_path):
    paths = write_runs(tmp_path, {"q": [1, 2, 3]})
    text = paths[1].read_text()
    paths[1].write_text(text[: len(text) // 2])
    with pytest.raises(InputError) as caught:
        read_history(tmp_path)
    assert caught.value.source == str(paths[1])


def test_an_artefact_holding_a_question_twice_is_refused(tmp_path):
    paths = write_runs(tmp_path, {"q": [1, 2, 3], "r": [1, 1, 1]})
    lines = paths[2].read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith('  ["q"'))
    lines.insert(first, lines[first])  # the row again, comma and all
    paths[2].write_text("".join(lines))
    with pytest.raises(InputError) as caught:
        read_history(tmp_path)
    assert caught.value.source == str(paths[2])


@pytest.mark.parametrize("make", ["missing", "empty", "file"])
def test_a_folder_with_no_artefacts_is_bad_input(tmp_path, make):
    target = tmp_path / "runs"
    if make == "empty":
        target.mkdir()
    elif make == "file":
        target.write_text("{}")
    with pytest.raises(InputError) as caught:
        read_history(target)
    assert caught.value.source == str(target)


def test_the_writers_layout_is_read_by_columns_and_gives_what_any_layout_gives(tmp_path, monkeypatch):
    import json

    import numpy as np

    from ci_eval.inputs import artefact_out

    plans = {"q": [1, None, 2, 3], "r": [2, 2, None, 1], "s": [None, 4, 4, 4]}
    golds = {"q": ["g", "g", "h", "h"]}  # q's gold changes at run 2 (0-based)
    written = tmp_path / "written"
    written.mkdir()
    write_runs(written, plans, tags={"q": ["a"], "r": ["a", "b"]}, golds=golds)
    other = tmp_path / "other"
    other.mkdir()
    for path in written.iterdir():  # the same content, in a layout that is not the writer's
        (other / path.name).write_text(json.dumps(json.loads(path.read_text()), indent=3))
    by_rows = read_history(other)
    real = artefact_out.written_rows

    def only_other(path, *a):
        assert "other" in str(path)  # the writer's layout never goes a row at a time
        return real(path, *a)

    monkeypatch.setattr(artefact_out, "written_rows", only_other)
    by_columns = read_history(written)
    assert by_columns.ids == by_rows.ids and by_columns.tags == by_rows.tags
    assert np.array_equal(by_columns.ranks, by_rows.ranks)
    assert np.array_equal(by_columns.values, by_rows.values, equal_nan=True)
    assert np.array_equal(by_columns.gold_changed, by_rows.gold_changed)
    q = by_columns.ids.index("q")
    assert by_columns.gold_changed[q].tolist() == [False, False, True, False]
    assert by_columns.gold_changed.sum() == 1


def test_a_run_with_a_broken_ranking_is_read_and_one_with_a_broken_metric_value_is_refused(tmp_path):
    """The history reads each row's id, tags, gold, first gold rank and metric values: a
    ranking it never reads does not stop it (compare, which reads it, still refuses the file),
    a value it shows does, worded by the full reader as compare words it."""
    from history_files import edit_row

    from ci_eval.inputs.artefact_stream import read_part

    paths = write_runs(tmp_path, {"q": [1, 2, 3], "r": [2, 2, 2]})
    edit_row(paths[1], "q", "ranking", [["g", 1.0], ["g", 0.5]])  # a chunk ranked twice
    assert {line.id: line.ranks for line in read_history(tmp_path).lines()}["q"] == (1, 2, 3)
    edit_row(paths[2], "r", "metrics", [1.5] + [1] * 9)
    with pytest.raises(InputError) as full:
        read_part(paths[2])
    with pytest.raises(InputError) as caught:
        read_history(tmp_path)
    assert (caught.value.source, caught.value.place, caught.value.message) == \
        (str(paths[2]), full.value.place, full.value.message)
    assert "1.5" in caught.value.message
