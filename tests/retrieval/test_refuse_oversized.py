"""A run whose artefact could pass the size limit is refused before the retriever is called."""

import json
import re
import sys

import pytest
from projects import write_config, write_module

from ci_eval.cli import main
from ci_eval.core.artefact.artefact_size import FLOAT, LONGEST_FLOAT
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
    qs = [{"id": f"q{i:03d}", "question": f"a question about topic {i}", "gold": [f"chunk-{i % 40:02d}"],
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


def _bound(monkeypatch, capsys) -> int:
    code, err = _run(monkeypatch, capsys, 1, "--out", "probe.json")
    assert code == 2
    return int(re.search(r"could reach ([\d,]+) bytes", err).group(1).replace(",", ""))


def test_the_float_stand_in_is_the_longest_repr():
    assert len(repr(LONGEST_FLOAT)) == FLOAT == len("-") + len("2.2250738585072014") + len("e-308")


def test_a_run_under_the_bound_runs_and_its_artefact_is_within_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_project(tmp_path, 60))
    bound = _bound(monkeypatch, capsys)
    assert not (tmp_path / "calls.txt").exists()
    code, err = _run(monkeypatch, capsys, bound, "--out", "run.json")
    assert code == 0, err
    assert len((tmp_path / "calls.txt").read_text().splitlines()) == 60
    assert (tmp_path / "run.json").stat().st_size <= bound


def _with_depth(tmp_path, depth: int) -> None:
    config = tmp_path / "ci-eval.toml"
    config.write_text(re.sub(r"depth = \d+", f"depth = {depth}", config.read_text()))


def test_one_byte_over_is_refused_before_any_call_with_a_depth_that_fits(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_project(tmp_path, 60))
    _with_depth(tmp_path, 12)
    bound = _bound(monkeypatch, capsys)
    code, err = _run(monkeypatch, capsys, bound - 1, "--out", "run.json")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert f"could reach {bound:,} bytes" in err and f"over the {bound - 1:,}-byte limit" in err
    # the four metrics plus hit@6, which every run adds at 3k
    assert "60 questions, depth 12, 5 metrics" in err
    assert not (tmp_path / "calls.txt").exists() and not (tmp_path / "run.json").exists()
    # sharding is never the advice: the merged artefact is the unsharded run's size
    assert "--shard" not in err and "shards would not help" in err
    depth = int(re.search(r"set \[retriever\] depth = (\d+) or less", err).group(1))
    assert 2 * 3 <= depth < 12  # at least 3k (k = 2)
    _with_depth(tmp_path, depth)  # the advice holds: the run goes through under the same limit
    code, err = _run(monkeypatch, capsys, bound - 1, "--out", "run.json")
    assert code == 0, err
    assert (tmp_path / "run.json").stat().st_size <= bound - 1
    assert len((tmp_path / "calls.txt").read_text().splitlines()) == 60


def test_a_shard_whose_merge_could_not_fit_is_refused_before_any_call(tmp_path, monkeypatch, capsys):
    # Each part of 2 is about half the run's size, under the limit; the merge of them is not.
    monkeypatch.chdir(_project(tmp_path, 60))
    bound = _bound(monkeypatch, capsys)
    for i in (1, 2):
        code, err = _run(monkeypatch, capsys, bound - 1, "--shard", f"{i}/2", "--out", f"part-{i}.json")
        assert code == 2 and f"(shard {i}/2)" in err
        assert "(merged: 60 questions, depth 6, 5 metrics)" in err and "shards would not help" in err
    assert not (tmp_path / "calls.txt").exists()
    assert not any(tmp_path.glob("part-*.json"))


def test_parts_of_a_run_that_fits_are_not_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_project(tmp_path, 60))
    bound = _bound(monkeypatch, capsys)
    for i in (1, 2):
        code, err = _run(monkeypatch, capsys, bound, "--shard", f"{i}/2", "--out", f"part-{i}.json")
        assert code == 0, err
    assert len((tmp_path / "calls.txt").read_text().splitlines()) == 60


@pytest.mark.parametrize("limit", [1, 100])
def test_no_depth_fits_a_tiny_limit(tmp_path, monkeypatch, capsys, limit):
    monkeypatch.chdir(_project(tmp_path, 3))
    code, err = _run(monkeypatch, capsys, limit, "--out", "run.json")
    assert code == 2 and "measure fewer questions or a smaller k (depth 6 is the least it allows)" in err
