"""retrieval/cache_writer.py: the cache's writer process, started and fed as the cache
starts and feeds it (retrieval/cache._Writer), read back with sqlite3."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from array import array
from contextlib import closing
from pathlib import Path

from ci_eval.retrieval import cache_writer
from ci_eval.retrieval.cache import _SCHEMA, _Writer


def _store(tmp_path: Path) -> Path:
    path = tmp_path / "store.sqlite3"
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(_SCHEMA)
    return path


PREFIX = b'{"type":"python"}\0idx-2\0'


def _answer(i: int) -> tuple:
    """An answer: (question, ids, scores, duplicates), ids and scores as the retriever's
    tuples (some ids with characters JSON escapes)."""
    ids = tuple(f"c{i}-{j}" for j in range(i % 4)) + ('say "q"\n',) * (i % 5 == 0)
    return f"question {i} é", ids, tuple(1.0 / (j + 2) for j in range(len(ids))), i % 3


def _entry(i: int) -> tuple:
    """The answer as the cache hands it to the writer, encoded by the writer's functions."""
    question, ids, scores, duplicates = _answer(i)
    return question, cache_writer.ids_json(ids), cache_writer.score_bytes(scores), duplicates


def _stored(i: int) -> tuple:
    """The row answer ``i`` should become but its time, derived with hashlib, json and
    array as a reader reads it: the key is sha256 over the prefix and the question."""
    question, ids, scores, duplicates = _answer(i)
    doubles = array("d", scores)
    if sys.byteorder != "little":
        doubles.byteswap()
    return (hashlib.sha256(PREFIX + question.encode()).digest(), question,
            json.dumps(list(ids), ensure_ascii=False, separators=(",", ":")), doubles.tobytes(), duplicates)


def _rows(path: Path, since: float = 0.0) -> list[tuple]:
    """The stored rows in key order, each without its time once that is checked to lie
    between ``since`` and now."""
    with closing(sqlite3.connect(path)) as db:
        found = db.execute(f"SELECT * FROM {cache_writer.TABLE} ORDER BY key").fetchall()
    assert all(since <= row[2] <= time.time() for row in found)
    return [row[:2] + row[3:] for row in found]


def test_every_batch_handed_over_is_written_in_full(tmp_path):
    path = _store(tmp_path)
    # two batches, the first out of key order and longer than one statement of rows
    first = list(reversed(range(cache_writer.ROWS + 7)))
    second = list(range(cache_writer.ROWS + 7, cache_writer.ROWS + 10))
    since = time.time()
    writer = _Writer(path, PREFIX)
    writer.send([_entry(i) for i in first])
    writer.send([_entry(i) for i in second])
    assert writer.finish() is None
    assert _rows(path, since) == sorted(map(_stored, first + second))
    # the log folded back into the one file the CI saves
    assert not (tmp_path / "store.sqlite3-wal").exists() or (tmp_path / "store.sqlite3-wal").stat().st_size == 0


def test_a_batch_cut_off_mid_way_is_dropped_and_the_whole_ones_kept(tmp_path):
    path = _store(tmp_path)
    body = cache_writer.wire([_entry(1), _entry(2)])
    whole = cache_writer.LENGTH.pack(len(PREFIX)) + PREFIX + cache_writer.LENGTH.pack(len(body)) + body
    cut = cache_writer.LENGTH.pack(len(body)) + body[: len(body) // 2]
    done = subprocess.run([sys.executable, "-c", "import sys; from ci_eval.retrieval.cache_writer import main; "
                           "main(sys.argv[1])", str(path)], input=whole + cut, capture_output=True, check=True)
    assert done.stdout == b"\n"
    assert _rows(path) == sorted([_stored(1), _stored(2)])


def test_a_writer_that_dies_is_said_and_the_run_is_not_held(tmp_path):
    path = _store(tmp_path)
    writer = _Writer(path, PREFIX)
    os.kill(writer.proc.pid, signal.SIGKILL)
    writer.proc.wait()
    for _ in range(40):  # past the pipe's buffer, so a write meets the closed end
        writer.send([_entry(i) for i in range(400)])
    said = writer.finish()
    assert said is not None and ("stopped" in said or str(-signal.SIGKILL) in said)


def test_a_store_that_cannot_take_the_rows_is_said_not_raised(tmp_path):
    path = tmp_path / "store.sqlite3"
    with closing(sqlite3.connect(path)) as db:  # a table of that name with other columns
        db.execute(f"CREATE TABLE {cache_writer.TABLE} (key BLOB PRIMARY KEY)")
    writer = _Writer(path, PREFIX)
    writer.send([_entry(1)])
    writer.send([_entry(2)])
    said = writer.finish()
    assert said is not None and "column" in said


def test_the_writer_has_no_token_and_reads_nothing_from_the_working_folder(tmp_path, monkeypatch):
    path = _store(tmp_path)
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret_value")
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", "ghs_secret_value")
    # a repository with modules named like what the writer imports
    for name in ("queue", "threading", "sqlite3", "struct"):
        (tmp_path / f"{name}.py").write_text("raise SystemExit('shadowed')\n")
    (tmp_path / "ci_eval").mkdir()
    (tmp_path / "ci_eval" / "__init__.py").write_text("raise SystemExit('shadowed')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    writer = _Writer(path, PREFIX)
    environ = Path(f"/proc/{writer.proc.pid}/environ").read_bytes()
    writer.send([_entry(3)])
    assert writer.finish() is None
    assert b"ghs_secret_value" not in environ
    assert _rows(path) == [_stored(3)]


def test_a_batch_that_cannot_be_read_is_said_and_its_transaction_left_unwritten(tmp_path):
    path = _store(tmp_path)
    good = cache_writer.wire([_entry(1)])
    frames = b"".join(cache_writer.LENGTH.pack(len(body)) + body for body in (PREFIX, good, b"not a pickle"))
    done = subprocess.run([sys.executable, "-c", "import sys; from ci_eval.retrieval.cache_writer import main; "
                           "main(sys.argv[1])", str(path)], input=frames, capture_output=True, check=True)
    assert done.stdout.startswith(b"a batch could not be read (UnpicklingError")
    # as with any failed batch, the open transaction is not committed: asked again next time
    assert _rows(path) == []
