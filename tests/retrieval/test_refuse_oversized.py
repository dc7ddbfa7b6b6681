"""A run whose artefact would pass the size limit is stopped early: before the retriever is called when\nthe gold set alone is over, else at its first rows; a run that fits is never refused."""

import json
import re
import sys

import pytest
from projects import write_config, write_module

from ci_eval.cli import main
from ci_eval.inputs import loaders

# Records every question it is asked (one line each), answers with ids of the index,
# some twice (a warning) and one outside it (another), scores whose repr is long.
RECORDING = """
import pathlib

CALLS = pathlib.Path(__file__).with_name("calls.txt")

def search(question, depth):
    with CALLS.open("a") as fh:
        fh.write(question + "\\n")
    n = int(question.split()[-1])
    ranked = [(f"chunk-{(n + j) % 40:02d}", 1 / (j + 3) / 7) for j in range(depth)]
    return ranked + ranked[:2] + [("chunk-zz", 1e-300)]
"""


@pytest.fixture(autouse=True)
def _fresh_module(monkeypatch):
    monkeypatch.delitem(sys.modules, "recording", raising=False)  # each test's own calls.txt


def _project(tmp_path, questions: int):
    qs = [{"id": f"q{i:04d}", "question": f"a question about topic {i}", "gold": [f"chunk-{i % 40:02d}"],
           "tags": [f"t{i % 3}"]} for i in range(questions)]
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": qs}))
    (tmp_path / "index.json").write_text(json.dumps({"version": "v1", "ids": [f"chunk-{j:02d}" for j in range(40)]}))
    write_module(tmp_path, "recording", RECORDING)
    write_config(tmp_path, 'type = "python"\ntarget = "recording:search"\ndepth = 6', k=2,
                 extra='metrics = ["hit@2", "recall@6", "ndcg@6", "mrr"]\n[index]\nmanifest = "index.json"')
    return tmp_path


def _run(monkeypatch, capsys, limit: int, *args: str) -> tuple[int, str]:
    monkeypatch.setattr(loaders, "MAX_ARTEFACT_BYTES", limit)
    code = main(["run", "--quiet", *args])
    return code, capsys.readouterr().err


def _size_alone(tmp_path, monkeypatch, capsys) -> int:
    """What the run writes with no limit in its way."""
    code, err = _run(monkeypatch, capsys, 1 << 40, "--out", "alone.json")
    assert code == 0, err
    (tmp_path / "calls.txt").unlink()
    return (tmp_path / "alone.json").stat().st_size


def _asked(tmp_path) -> int:
    calls = tmp_path / "calls.txt"
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def test_a_run_whose_artefact_fits_is_not_refused(tmp_path, monkeypatch, capsys):
    # 600 questions: the size is projected from the first 512 rows. The limit is the size
    # and 1 % (latencies are written with as many digits as they have, so two runs differ).
    monkeypatch.chdir(_project(tmp_path, 600))
    limit = _size_alone(tmp_path, monkeypatch, capsys) * 101 // 100
    code, err = _run(monkeypatch, capsys, limit, "--out", "run.json")
    assert code == 0, err
    assert (tmp_path / "run.json").stat().st_size <= limit and _asked(tmp_path) == 600


def _with_depth(tmp_path, depth: int) -> None:
    config = tmp_path / "ci-eval.toml"
    config.write_text(re.sub(r"depth = \d+", f"depth = {depth}", config.read_text()))


def test_a_run_on_course_past_the_limit_stops_at_its_first_rows_with_a_depth_that_fits(tmp_path, monkeypatch,
                                                                                        capsys):
    # 2,000 questions: projected from the first 512 rows, a quarter of the run
    monkeypatch.chdir(_project(tmp_path, 2000))
    _with_depth(tmp_path, 12)
    size = _size_alone(tmp_path, monkeypatch, capsys)
    limit = size * 4 // 5
    code, err = _run(monkeypatch, capsys, limit, "--out", "run.json")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    projected = int(re.search(r"on course for ([\d,]+) bytes", err).group(1).replace(",", ""))
    assert limit < projected <= size * 1.05  # within 5 % of what it would have written
    assert "stopped after 512 of 2,000 questions" in err and f"over the {limit:,}-byte limit" in err
    assert not (tmp_path / "run.json").exists()
    assert "--shard" not in err and "shards would not help" in err
    depth = int(re.search(r"set \[retriever\] depth = (\d+) or less", err).group(1))
    assert 2 * 3 <= depth < 12  # at least 3k (k = 2)
    _with_depth(tmp_path, depth)  # the advice holds: the run goes through under the same limit
    code, err = _run(monkeypatch, capsys, limit, "--out", "run.json")
    assert code == 0, err
    assert (tmp_path / "run.json").stat().st_size <= limit


def test_a_shard_whose_merge_could_not_fit_is_stopped_with_its_part_unwritten(tmp_path, monkeypatch, capsys):
    # Each part of 2 is about half the run's size, under the limit; the merge of them is not.
    monkeypatch.chdir(_project(tmp_path, 60))
    size = _size_alone(tmp_path, monkeypatch, capsys)
    for i in (1, 2):
        code, err = _run(monkeypatch, capsys, size * 4 // 5, "--shard", f"{i}/2", "--out", f"part-{i}.json")
        assert code == 2 and "(merged: 60 questions)" in err and "shards would not help" in err
    assert not any(tmp_path.glob("part-*.json"))


def test_parts_of_a_run_that_fits_are_not_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_project(tmp_path, 60))
    limit = _size_alone(tmp_path, monkeypatch, capsys) * 101 // 100  # latencies vary a little
    for i in (1, 2):
        code, err = _run(monkeypatch, capsys, limit, "--shard", f"{i}/2", "--out", f"part-{i}.json")
        assert code == 0, err
    assert _asked(tmp_path) == 60


@pytest.mark.parametrize("limit", [1, 100])
def test_a_gold_set_over_the_limit_alone_is_refused_before_any_call(tmp_path, monkeypatch, capsys, limit):
    monkeypatch.chdir(_project(tmp_path, 3))
    code, err = _run(monkeypatch, capsys, limit, "--out", "run.json")
    assert code == 2 and "from the gold set's 3 questions alone" in err and "measure fewer questions" in err
    assert _asked(tmp_path) == 0 and not (tmp_path / "run.json").exists()
