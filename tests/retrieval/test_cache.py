"""retrieval/cache.py through the real pipeline: a real Python retriever that counts its
calls is asked only for what the cache cannot answer under the current key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fake_retrievers
import pytest
from shard_helpers import run_in_process, without_times
from suite_paths import SUPPORT

from ci_eval.core.shard import Shard


def write(root: Path, questions, *, params: str = "", version: str = "idx-2", cache: str = "") -> Path:
    root.mkdir(exist_ok=True)
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": questions}))
    (root / "index.json").write_text(json.dumps({"version": version, "ids": fake_retrievers.CHUNKS}))
    (root / "ci-eval.toml").write_text(
        'gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "python"\ntarget = "fake_retrievers:counting"\n'
        f'concurrency = 1\n{params}\n{cache}\n[index]\nmanifest = "index.json"\n')
    return root / "ci-eval.toml"


QUESTIONS = [
    {"id": "q1", "question": "alpha one", "gold": ["alpha"]},
    {"id": "q2", "question": "beta two", "gold": ["beta"]},
    {"id": "q3", "question": "gamma three", "gold": ["alpha"]},
    {"id": "q4", "question": "boom four", "gold": ["beta"]},  # the retriever raises on it
]


@pytest.fixture
def calls(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CALLS_FILE", str(tmp_path / "calls.jsonl"))
    fake_retrievers.CALLS.clear()
    yield fake_retrievers.CALLS
    fake_retrievers.CALLS.clear()


def test_a_second_run_asks_only_for_what_failed(tmp_path, calls):
    config = write(tmp_path / "p", QUESTIONS)
    cache = str(tmp_path / "cache")
    first = run_in_process(config, cache_dir=cache)
    assert sorted(calls) == sorted(q["question"] for q in QUESTIONS)
    assert first["cache"] == {"hits": 0, "misses": 4}
    calls.clear()
    second = run_in_process(config, cache_dir=cache)
    # A failed answer is never stored: only "boom four" is asked again.
    assert calls == ["boom four"] and second["cache"] == {"hits": 3, "misses": 1}
    first.pop("cache"), second.pop("cache")
    assert without_times(first) == without_times(second)
    # No call was made for a cached answer, so no latency is claimed for it.
    assert [q["latency_ms"] is None for q in second["questions"]] == [True, True, True, False]


def test_only_a_reworded_question_is_asked_again(tmp_path, calls):
    cache = str(tmp_path / "cache")
    run_in_process(write(tmp_path / "p", QUESTIONS[:3]), cache_dir=cache)
    calls.clear()
    reworded = [QUESTIONS[0], {**QUESTIONS[1], "question": "beta two, reworded"}, QUESTIONS[2],
                {"id": "q9", "question": "delta nine", "gold": ["delta"]}]
    # A gold-only change (q3's label) keeps its cached answer; q3's metrics follow the new label.
    reworded[2] = {**reworded[2], "gold": ["gamma"]}
    run = run_in_process(write(tmp_path / "p", reworded), cache_dir=cache)
    assert sorted(calls) == ["beta two, reworded", "delta nine"]
    assert run["cache"] == {"hits": 2, "misses": 2}
    assert {q["id"]: q["metrics"]["hit@1"] for q in run["questions"]}["q3"] == 1.0


@pytest.mark.parametrize("change", [{"params": "params = { k1 = 2.0 }"}, {"version": "idx-3"}])
def test_a_changed_retriever_config_or_index_version_misses_everything(tmp_path, calls, change):
    cache = str(tmp_path / "cache")
    run_in_process(write(tmp_path / "p", QUESTIONS[:3]), cache_dir=cache)
    calls.clear()
    run = run_in_process(write(tmp_path / "p", QUESTIONS[:3], **change), cache_dir=cache)
    assert sorted(calls) == sorted(q["question"] for q in QUESTIONS[:3])
    assert run["cache"] == {"hits": 0, "misses": 3}


def test_the_config_names_the_cache_folder_and_shards_share_it(tmp_path, calls):
    config = write(tmp_path / "p", QUESTIONS[:3], cache='cache = "retrieval-cache"')
    for i in (1, 2):
        run_in_process(config, shard=Shard(i, 2))
    assert sorted(calls) == sorted(q["question"] for q in QUESTIONS[:3])
    assert (tmp_path / "p" / "retrieval-cache").is_dir()  # relative to the config's folder
    calls.clear()
    run = run_in_process(config)
    assert calls == [] and run["cache"] == {"hits": 3, "misses": 0}
    # The cache folder is not part of the recorded config: parts with and without it merge.
    assert "cache" not in run["config"]["retriever"]


def test_an_unreadable_entry_is_a_miss_and_is_written_again(tmp_path, calls):
    config = write(tmp_path / "p", QUESTIONS[:1])
    cache = tmp_path / "cache"
    run_in_process(config, cache_dir=str(cache))
    entry, = cache.rglob("*.json")
    entry.write_text("{ not json")
    calls.clear()
    run = run_in_process(config, cache_dir=str(cache))
    assert calls == ["alpha one"] and run["cache"] == {"hits": 0, "misses": 1}
    assert json.loads(entry.read_text())["ids"] == [q["id"] for q in run["questions"][0]["ranking"]]


def test_without_a_cache_nothing_is_recorded_or_written(tmp_path, calls):
    run = run_in_process(write(tmp_path / "p", QUESTIONS[:2]))
    assert "cache" not in run and len(calls) == 2
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["ci-eval.toml", "gold.json", "index.json"]


def test_a_cache_without_an_index_version_is_refused(tmp_path):
    root = tmp_path / "p"
    write(root, QUESTIONS[:1])
    (root / "index.json").write_text(json.dumps({"ids": fake_retrievers.CHUNKS}))
    env = {**os.environ, "PYTHONPATH": str(SUPPORT)}
    done = subprocess.run([sys.executable, "-m", "ci_eval", "run", "--quiet", "--cache", "c"], cwd=root,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and not (root / "c").exists() and not (root / "ci-eval-run.json").exists()
    assert done.stderr.strip() == ('ci-eval: error: --cache: the retrieval cache needs an index version '
                                   '(a manifest with a "version", or [index] version)')
