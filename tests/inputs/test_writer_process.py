"""A large artefact written by a child process: the bytes the run itself writes, and every way
it can fail (the limit, the retriever, Ctrl-C, the child killed, the disk) one line, the
destination untouched, no temporary file, no child left, no descriptor left open. Every
case has a real child; the size from which it is used is lowered so a few thousand rows
take that route."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_files import read_run
from shard_helpers import merge_in_process, run_in_process, run_to, without_times, write_project
from suite_paths import SUPPORT

from ci_eval.core.artefact.question_row import QUESTION_FIELDS
from ci_eval.core.artefact.shard import Shard
from ci_eval.errors import EXIT_BAD_INPUT, InputError, RetrieverError
from ci_eval.inputs import artefact_out, writer_process

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the child through /proc")

HEAD = {"tool": {"name": "ci-eval", "version": "0"}, "config": {"retriever": {"depth": 3}}, "k": 2,
        "metrics": ["hit@2", "mrr"], "schema_version": 2}


class Score(float):
    """A float subclass (numpy's float64 is one): marshal does not carry it."""


def row(n: int) -> list:
    ranking = [[f"c{n + r}", 1 / (r + 1)] for r in range(3)]
    values = {"id": f"q{n}", "question": f"question {n}: é ∑ \u2028 \"quoted\"", "tags": [f"t{n % 3}"],
              "unanswerable": n % 7 == 0, "status": "ok", "gold": [[f"c{n}", 1 + n % 2]], "stale": [],
              "metrics": [1, 1 / (1 + n % 3)], "first_gold_rank": 1 + n % 3, "top_score": 1.0,
              "latency_ms": n / 1000, "answer_correct": None, "judged_at_k": 0.5, "error": None,
              "warnings": [], "ranking": ranking}
    return [values[field] for field in QUESTION_FIELDS]


class Columns:
    def __init__(self):
        self.ids = []

    def add(self, r):
        self.ids.append(r[0])


def writer_children(parent: str = "self") -> list[int]:
    """The children of ``parent`` that are the artefact's writer: the writer is started in a
    session of its own, so it leads one (nothing else these tests start does)."""
    pids = []
    for task in Path(f"/proc/{parent}/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    return [p for p in pids if _session(p) == p]


def _session(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[3])  # state, ppid, pgrp, session


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def write(path, rows, *, child: bool, monkeypatch, limit=None, end=None) -> int:
    monkeypatch.setattr(artefact_out, "WRITER_PROCESS_FROM", 1 if child else 10**12)
    columns = Columns()
    return artefact_out.write_rows(path, HEAD, rows, columns, end or (lambda: {"summary": {"n": len(columns.ids)}}),
                                   3000, limit)


def watched(n: int, at: int, action):
    """``n`` rows; ``action(writer pid)`` run before row ``at`` (once the child is seen)."""
    for i in range(n):
        if i == at:
            found = writer_children()
            assert len(found) == 1, found  # the rows really go through one child
            action(found[0])
        yield row(i)


@pytest.mark.parametrize("behind", [10**12, -1, None], ids=["child-encodes", "run-encodes", "as-it-goes"])
def test_the_child_writes_the_bytes_the_run_writes_itself(tmp_path, monkeypatch, behind):
    if behind is not None:
        monkeypatch.setattr(writer_process, "_BEHIND", behind)
    def rows():
        for i in range(3000):
            r = row(i)
            if i == 1234:
                r[QUESTION_FIELDS.index("top_score")] = Score(0.1)  # this batch goes as text
            yield r

    fds = open_fds()
    size = write(tmp_path / "child.json", rows(), child=True, monkeypatch=monkeypatch)
    write(tmp_path / "self.json", rows(), child=False, monkeypatch=monkeypatch)
    text = (tmp_path / "child.json").read_bytes()
    assert text == (tmp_path / "self.json").read_bytes() and size == len(text)
    assert [r[0] for r in json.loads(text)["questions"]] == [f"q{i}" for i in range(3000)]
    assert writer_children() == [] and open_fds() == fds


def test_the_rows_really_go_through_one_child(tmp_path, monkeypatch):
    seen = []
    write(tmp_path / "run.json", watched(3000, 2000, seen.append), child=True, monkeypatch=monkeypatch)
    assert len(seen) == 1 and not Path(f"/proc/{seen[0]}").exists()  # reaped
    assert json.loads((tmp_path / "run.json").read_text())["summary"] == {"n": 3000}


def previous(tmp_path) -> Path:
    dest = tmp_path / "run.json"
    dest.write_text("the previous run")
    return dest


def assert_untouched(dest: Path, fds: set[str]) -> None:
    assert dest.read_text() == "the previous run"
    assert [p.name for p in dest.parent.iterdir()] == [dest.name]  # no temporary file
    assert writer_children() == [] and open_fds() == fds


def test_the_size_limit_refuses_in_the_run_s_words(tmp_path, monkeypatch):
    dest, fds = previous(tmp_path), open_fds()
    refusals = []
    for child in (False, True):
        with pytest.raises(InputError) as caught:
            write(dest, (row(i) for i in range(3000)), child=child, monkeypatch=monkeypatch, limit=100_000)
        refusals.append(str(caught.value))
        assert caught.value.exit_code == EXIT_BAD_INPUT
        assert_untouched(dest, fds)
    assert refusals[0] == refusals[1]
    assert refusals[1].startswith(f"{dest}: the run artefact would be over the 100,000-byte limit")


def test_a_retriever_failure_stops_the_child_and_leaves_nothing(tmp_path, monkeypatch):
    dest, fds = previous(tmp_path), open_fds()

    def fail(pid):
        raise RetrieverError("the index went away")

    with pytest.raises(RetrieverError, match="the index went away"):
        write(dest, watched(3000, 1500, fail), child=True, monkeypatch=monkeypatch)
    assert_untouched(dest, fds)


def test_ctrl_c_in_the_run_stops_the_child_and_leaves_nothing(tmp_path, monkeypatch):
    dest, fds = previous(tmp_path), open_fds()
    pids = []

    def interrupt(pid):
        pids.append(pid)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write(dest, watched(3000, 1500, interrupt), child=True, monkeypatch=monkeypatch)
    assert_untouched(dest, fds)
    assert not Path(f"/proc/{pids[0]}").exists()


def _until_dead(pid: int) -> None:
    """Wait until ``pid`` is a zombie (killed, not yet reaped by its parent, us)."""
    for _ in range(500):
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return
        time.sleep(0.01)
    raise AssertionError(f"{pid} did not die")


def test_the_child_killed_is_one_line_naming_the_path(tmp_path, monkeypatch):
    dest, fds = previous(tmp_path), open_fds()

    def kill(pid):
        os.kill(pid, signal.SIGKILL)
        _until_dead(pid)

    with pytest.raises(InputError) as caught:
        write(dest, watched(3000, 500, kill), child=True, monkeypatch=monkeypatch)
    assert str(caught.value) == f"{dest}: could not be written: the process writing it was killed by SIGKILL before it was written"
    assert caught.value.exit_code == EXIT_BAD_INPUT
    assert_untouched(dest, fds)


def test_the_child_killed_after_the_last_row_is_caught_too(tmp_path, monkeypatch):
    dest, fds = previous(tmp_path), open_fds()

    def end():
        [pid] = writer_children()
        os.kill(pid, signal.SIGTERM)
        _until_dead(pid)
        return {"summary": {}}

    with pytest.raises(InputError, match="killed by SIGTERM before it was written"):
        write(dest, (row(i) for i in range(3000)), child=True, monkeypatch=monkeypatch, end=end)
    assert_untouched(dest, fds)


def test_a_file_size_limit_in_the_child_is_the_disk_s_own_words(tmp_path, monkeypatch):
    """The child's write refused by the system (a full disk is the same path): its error
    in the words the run would give, nothing left."""
    command = writer_process._command

    def limited(fd, limit):
        argv = command(fd, limit)
        boot = argv[argv.index("-c") + 1]
        argv[argv.index("-c") + 1] = "import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (50000, 50000)); " + boot
        return argv

    monkeypatch.setattr(writer_process, "_command", limited)
    dest, fds = previous(tmp_path), open_fds()
    with pytest.raises(InputError) as caught:
        write(dest, (row(i) for i in range(3000)), child=True, monkeypatch=monkeypatch)
    assert str(caught.value) == f"{dest}: could not be written: {os.strerror(errno.EFBIG)}"
    assert_untouched(dest, fds)


QUESTIONS = [{"id": f"q{n:03d}", "question": f"{['alpha', 'beta', 'boom'][n % 3]} question {n}",
              "gold": [["alpha", "beta", "gamma"][n % 3]], "tags": [f"t{n % 2}"]} for n in range(300)]


def test_merged_shards_through_the_child_equal_the_unsharded_run(tmp_path, monkeypatch):
    config = write_project(tmp_path / "project", QUESTIONS)
    whole = run_in_process(config)
    monkeypatch.setattr(artefact_out, "WRITER_PROCESS_FROM", 1)
    assert without_times(run_in_process(config)) == without_times(whole)
    parts = [run_to(config, tmp_path / f"part-{i}.json", shard=Shard(i, 3)) for i in (1, 2, 3)]
    merged = merge_in_process(parts, tmp_path / "merged.json")
    assert without_times(merged) == without_times(whole)
    monkeypatch.setattr(artefact_out, "WRITER_PROCESS_FROM", 10**12)
    merge_in_process(parts, tmp_path / "merged-here.json")
    assert (tmp_path / "merged.json").read_bytes() == (tmp_path / "merged-here.json").read_bytes()


# `ci-eval run` as a real process, its writer forced to a child from the first question.
BOOT = ("import sys; from ci_eval.inputs import artefact_out; artefact_out.WRITER_PROCESS_FROM = 1; "
        "from ci_eval.cli import main; sys.exit(main(sys.argv[1:]))")


def start_run(root: Path, *args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(SUPPORT)}
    return subprocess.Popen([sys.executable, "-c", BOOT, "run", "--quiet", "--out", "run.json", *args], cwd=root,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_interruptible)


def _interruptible() -> None:
    """Ctrl-C reaches the run as a terminal's would. A suite started in the background (or by a
    parallel worker) ignores SIGINT, and a Python child that inherits the ignoring never
    raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_run_whose_retriever_fails_exits_4_with_the_artefact_the_run_itself_writes(tmp_path, monkeypatch):
    config = write_project(tmp_path, QUESTIONS)
    done = start_run(tmp_path)
    out, err = done.communicate(timeout=120)
    assert done.returncode == 4, err
    assert "failed on 100 question(s)" in err
    monkeypatch.setattr(artefact_out, "WRITER_PROCESS_FROM", 10**12)
    assert without_times(read_run(tmp_path / "run.json")) == without_times(run_in_process(config))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_ctrl_c_on_a_real_run_stops_its_writer_and_leaves_nothing(tmp_path):
    slow = [{**q, "question": f"alpha question {n} 0.02"} for n, q in enumerate(QUESTIONS)]
    write_project(tmp_path, slow, target="sleepy")
    before = sorted(p.name for p in tmp_path.iterdir())
    run = start_run(tmp_path)
    writer = _writer_of(run.pid)
    time.sleep(0.3)  # past the writer's exec (seen from its fork on), while questions are asked
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130 and err.strip().endswith("interrupted"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no run.json, no temporary file
    assert not Path(f"/proc/{writer}").exists()  # the writer is gone, and reaped


def _writer_of(pid: int) -> int:
    for _ in range(1000):
        found = writer_children(str(pid))
        if found:
            return found[0]
        time.sleep(0.01)
    raise AssertionError("the run started no writer")


@pytest.mark.parametrize("questions, depth", [(20_000, 15), (19_999, 15), (10_000, 30), (300_000, None)])
def test_the_child_is_used_from_questions_times_depth(tmp_path, questions, depth):
    head = {**HEAD, "config": {"retriever": {"depth": depth}}}
    seen = []

    def rows():
        yield row(0)
        seen.append(len(writer_children()))
        yield row(1)

    artefact_out.write_rows(tmp_path / "run.json", head, rows(), Columns(), lambda: {}, questions)
    expected = questions * (depth or 10) >= artefact_out.WRITER_PROCESS_FROM  # no depth recorded: 10
    assert seen == [1 if expected else 0] and writer_children() == []
    assert [r[0] for r in json.loads((tmp_path / "run.json").read_text())["questions"]] == ["q0", "q1"]


def test_without_a_known_interpreter_the_run_writes_the_artefact_itself(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", "")
    seen = []
    write(tmp_path / "run.json", watched(3000, 10**9, None), child=True, monkeypatch=monkeypatch)
    rows = (row(i) for i in range(3000))

    def counting():
        for i, r in enumerate(rows):
            if i == 100:
                seen.append(len(writer_children()))
            yield r

    write(tmp_path / "again.json", counting(), child=True, monkeypatch=monkeypatch)
    assert seen == [0]
    assert (tmp_path / "run.json").read_bytes() == (tmp_path / "again.json").read_bytes()
