"""retrieval/cache.py through the real pipeline: a real Python retriever that counts its
calls is asked only for what the cache cannot answer under the current key."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from array import array
from contextlib import closing
from pathlib import Path

import fake_retrievers
import pytest
from run_files import read_run
from shard_helpers import run_in_process, without_times
from suite_paths import SUPPORT

from ci_eval.core.artefact.shard import Shard
from ci_eval.retrieval.cache import FILE_NAME, MAX_AGE_DAYS


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


def test_batches_written_many_rows_a_statement_read_back_whole(tmp_path, calls):
    from ci_eval.retrieval.cache_writer import ROWS as _ROWS

    # two full statements of rows and a remainder written one row a statement
    count = 2 * _ROWS + 3
    questions = [{"id": f"m{i:03d}", "question": f"{('alpha', 'beta', 'gamma')[i % 3]} many {i}",
                  "gold": ["alpha"]} for i in range(count)]
    config = write(tmp_path / "p", questions)
    cache = str(tmp_path / "cache")
    first = run_in_process(config, cache_dir=cache)
    assert first["cache"] == {"hits": 0, "misses": count}
    assert len(_entries(Path(cache))) == count
    calls.clear()
    second = run_in_process(config, cache_dir=cache)
    assert calls == [] and second["cache"] == {"hits": count, "misses": 0}
    assert [r["ranking"] for r in second["questions"]] == [r["ranking"] for r in first["questions"]]


def _entries(cache: Path) -> list[tuple]:
    with closing(sqlite3.connect(cache / FILE_NAME)) as db:
        return db.execute("SELECT key, ids, written FROM entries_v2").fetchall()


def _set(cache: Path, column: str, value) -> None:
    with closing(sqlite3.connect(cache / FILE_NAME)) as db, db:
        db.execute(f"UPDATE entries_v2 SET {column} = ?", (value,))


def test_an_unreadable_entry_is_a_miss_and_is_written_again(tmp_path, calls, capsys):
    config = write(tmp_path / "p", QUESTIONS[:1])
    cache = tmp_path / "cache"
    run_in_process(config, cache_dir=str(cache))
    _set(cache, "ids", "{ not json")
    calls.clear()
    run = run_in_process(config, cache_dir=str(cache))
    assert calls == ["alpha one"] and run["cache"] == {"hits": 0, "misses": 1}
    (_, ids, _), = _entries(cache)
    assert json.loads(ids) == [q["id"] for q in run["questions"][0]["ranking"]]
    assert ("1 entry could not be used and was asked again (1 unreadable (its ids are not JSON))"
            in capsys.readouterr().err)


def test_an_entry_expires_after_its_age(tmp_path, calls, capsys):
    config = write(tmp_path / "p", QUESTIONS[:2])
    cache = tmp_path / "cache"
    run_in_process(config, cache_dir=str(cache))
    (key, _, written), _ = sorted(_entries(cache))
    with closing(sqlite3.connect(cache / FILE_NAME)) as db, db:
        db.execute("UPDATE entries_v2 SET written = ? WHERE key = ?", (written - (MAX_AGE_DAYS + 1) * 86_400, key))
    calls.clear()
    run = run_in_process(config, cache_dir=str(cache))
    assert len(calls) == 1 and run["cache"] == {"hits": 1, "misses": 1}
    assert {k: w for k, _, w in _entries(cache)}[key] >= written  # the old one replaced by a fresh answer
    assert "could not be used" not in capsys.readouterr().err  # expiry is not a fault


def test_a_cache_file_that_is_not_sqlite_is_refused_naming_it(tmp_path):
    root = tmp_path / "p"
    write(root, QUESTIONS[:1])
    (root / "c").mkdir()
    (root / "c" / FILE_NAME).write_text("not a database " * 100)
    env = {**os.environ, "PYTHONPATH": str(SUPPORT)}
    done = subprocess.run([sys.executable, "-m", "ci_eval", "run", "--quiet", "--cache", "c"], cwd=root,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and not (root / "ci-eval-run.json").exists()
    line, = done.stderr.strip().splitlines()
    assert line.startswith(f"ci-eval: error: --cache: the retrieval cache c/{FILE_NAME} cannot be used (")


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


# The retriever of the tests below answers what answer.json in its folder says, and notes
# every question it is asked in calls.txt.
ANSWERING = """
import json, pathlib

HERE = pathlib.Path(__file__).parent

def search(question, depth):
    with (HERE / "calls.txt").open("a") as fh:
        fh.write(question + "\\n")
    return [tuple(pair) for pair in json.loads((HERE / "answer.json").read_text())]
"""
GOOD = [["alpha", 0.9], ["beta", 0.5], ["gamma", 0.1]]


def _answering(root: Path, answer) -> None:
    root.mkdir(exist_ok=True)
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": QUESTIONS[:1]}))
    (root / "index.json").write_text(json.dumps({"version": "idx-2", "ids": fake_retrievers.CHUNKS}))
    (root / "answering.py").write_text(ANSWERING)
    (root / "answer.json").write_text(json.dumps(answer))
    (root / "ci-eval.toml").write_text(
        'gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "python"\ntarget = "answering:search"\n'
        'depth = 3\n[index]\nmanifest = "index.json"\n')


def _cli(root: Path, *args):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=root, capture_output=True, text=True,
                          env=env, timeout=120)


def _calls(root: Path) -> int:
    path = root / "calls.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _cached_run_of(root: Path, ids, scores):
    """A run with the one cache entry replaced by ``ids`` and ``scores``."""
    assert _cli(root, "run", "--quiet", "--cache", "c", "--out", "first.json").returncode == 0
    _set(root / "c", "ids", json.dumps(ids))
    _set(root / "c", "scores", scores if isinstance(scores, (str, bytes)) else array("d", scores).tobytes())
    return _cli(root, "run", "--quiet", "--cache", "c", "--out", "cached.json")


@pytest.mark.parametrize("ids, scores", [
    ([None, {"a": 1}], [0.9, 0.5]),
    (["alpha", "beta"], "high"),
    (["alpha", "beta"], b"\x00" * 12),
    (["alpha", "beta"], [0.9, float("nan")]),
    (["alpha"], [0.9, 0.5]),
], ids=["ids of no kind", "a score high", "scores not doubles", "a score NaN", "lengths differ"])
def test_an_entry_the_cleaning_refuses_is_asked_again_and_said(tmp_path, ids, scores):
    root = tmp_path / "p"
    _answering(root, GOOD)
    done = _cached_run_of(root, ids, scores)
    assert done.returncode == 0, done.stderr
    assert _calls(root) == 2  # asked again
    assert "1 entry could not be used and was asked again" in done.stderr
    compared = _cli(root, "compare", "--no-base", "cached.json", "--no-config")
    assert compared.returncode == 0, compared.stderr
    first, cached = (read_run(root / n) for n in ("first.json", "cached.json"))
    assert cached["questions"][0]["ranking"] == first["questions"][0]["ranking"]


@pytest.mark.parametrize("answer", [
    [["beta", 0.5], ["alpha", 0.5], ["beta", 0.4], ["alpha", 0.3]],  # repeated ids
    [["gamma", 0.1], ["beta", 0.5], ["alpha", 0.9]],  # ascending
    [[f"chunk-{n}", 1000.0 - n] for n in range(1000)],  # far past depth 3, outside the index
    [[1, 0.9], [2, 0.5]],  # integer ids: strings, as a live answer's
], ids=["repeated ids", "ascending scores", "past the depth", "integer ids"])
def test_an_entry_is_cleaned_as_the_same_live_answer_is(tmp_path, answer):
    live = tmp_path / "live"
    _answering(live, answer)
    assert _cli(live, "run", "--quiet", "--out", "live.json").returncode == 0
    root = tmp_path / "p"
    _answering(root, GOOD)
    done = _cached_run_of(root, [cid for cid, _ in answer], [s for _, s in answer])
    assert done.returncode == 0, done.stderr
    assert _calls(root) == 1  # answered from the cache
    cached, expected = read_run(root / "cached.json")["questions"][0], read_run(live / "live.json")["questions"][0]
    assert len(cached["ranking"]) <= 3
    for key in ("ranking", "warnings", "metrics", "first_gold_rank", "top_score", "status"):
        assert cached[key] == expected[key], key
    compared = _cli(root, "compare", "--no-base", "cached.json", "--no-config")
    assert compared.returncode == 0, compared.stderr


@pytest.mark.parametrize("ids", [(), ("a",), ("a", "b c"), ('say "hi"',), ("back\\slash",), ("tab\there",),
                                 ("new\nline",), ("\x00", "\x1f"), ("é", "日本"), ("\x7f", "\u2028")])
def test_an_entry_s_ids_are_the_text_json_writes(ids):
    from ci_eval.retrieval.cache_writer import ids_json as _ids_json

    assert _ids_json(ids) == json.dumps(list(ids), ensure_ascii=False, separators=(",", ":"))
    assert json.loads(_ids_json(ids)) == list(ids)
