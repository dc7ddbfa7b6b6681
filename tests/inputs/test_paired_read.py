"""Base and head read at once, the base in a real forked child: the same artefacts as
reading them one after the other, the same errors, and the serial read whenever the child
steps aside or forking is not for this pair."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from factories import ranked_with_gold_at as at
from factories import spec
from v2_files import assert_same_columns, out_of_range, write_v2

from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs import artefact_file, paired_read
from ci_eval.inputs.artefact_file import read_run
from ci_eval.inputs.paired_read import parallel_possible, read_pair

BASE = [spec("q1", {"a": 2, "b": 1}, ["b", "x", "a"], tags=["faq"]), spec("q2", ["g"], at(3)),
        spec("q3", ["g"], error="timeout after 30 s"), spec("u1", unanswerable=True, ranking=["z"]),
        spec("s1", ["g", "h"], at(2, "h"), stale=["g"]), spec("q4", ["g"], at(1), tags=["how-to"])]
HEAD = [spec("q1", {"a": 2, "b": 1}, ["a", "b"], tags=["faq"]), spec("q2", ["g"], at(None)),
        spec("q5", ["g"], at(2)), spec("u1", unanswerable=True, ranking=[]),
        spec("s1", ["g", "h"], at(1, "h"), stale=["g"]), spec("q4", ["g"], at(4), tags=["how-to"])]


@pytest.fixture
def pair(tmp_path):
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    write_v2(base, BASE)
    write_v2(head, HEAD)
    return str(base), str(head)


@pytest.fixture
def forks(monkeypatch):
    """The pids of the children forked by the paired read, in this process."""
    real, pids = os.fork, []

    def fork():
        pid = real()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return pids


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def serial(base: str, head: str):
    b = read_run(base)
    h = read_run(head, shared=b)
    if b.depth < h.header.k:
        b = read_run(base, top=h.header.k, shared=h)
    return b, h


needs_fork = pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                                reason="the parallel read needs Linux and two usable CPUs")


@needs_fork
def test_both_read_at_once_hold_what_reading_one_after_the_other_holds(pair, forks):
    before = open_fds()
    base, head = read_pair(*pair)
    assert len(forks) == 1
    with pytest.raises(ChildProcessError):  # reaped
        os.waitpid(forks[0], os.WNOHANG)
    assert open_fds() == before
    want_base, want_head = serial(*pair)
    assert_same_columns(base, want_base)
    assert_same_columns(head, want_head)
    assert base.columns.strings == {} and head.columns.strings == {}  # done reading


@needs_fork
def test_a_base_kept_shallower_than_the_heads_k_is_read_again_deep_enough(tmp_path, forks):
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    write_v2(base, BASE, k=2)
    write_v2(head, HEAD, k=5)
    b, h = read_pair(str(base), str(head))
    assert len(forks) == 1 and b.depth == 5 == h.header.k
    assert_same_columns(b, read_run(base, top=5))
    assert b.columns.top(0) == ("b", "x", "a")  # q1's whole ranking, three of five places


@needs_fork
def test_no_base_reads_the_head_alone(pair, forks):
    base, head = read_pair(None, pair[1])
    assert base is None and not forks
    assert_same_columns(head, read_run(pair[1]))


def _bad(path) -> None:
    """Metric values out of range in three rows (q1, q2, q4): several problems in one file."""
    assert out_of_range(path) == 3, "the mutation did not apply"


def _error(path) -> InputError:
    with pytest.raises(InputError) as caught:
        read_run(path)
    return caught.value


@needs_fork
@pytest.mark.parametrize("which", ["base", "head", "both"])
def test_a_bad_file_raises_the_serial_reads_error(pair, forks, which):
    base, head = pair
    for path in {"base": [base], "head": [head], "both": [base, head]}[which]:
        _bad(path)
    want = _error(base if which != "head" else head)  # the base's when both are bad
    assert isinstance(want, InputErrors) and len(want.problems) == 3
    with pytest.raises(InputError) as caught:
        read_pair(base, head)
    assert len(forks) == 1
    got = caught.value
    assert type(got) is type(want) and str(got) == str(want) and got.lines() == want.lines()
    assert (got.source, got.place, got.message) == (want.source, want.place, want.message)


def _in_child(parent: int, base: str, act):
    """A reader that does ``act`` when the child reads ``base`` and reads as usual otherwise."""
    real = artefact_file.read_run

    def reader(path, **kw):
        if os.getpid() != parent and str(path) == base:
            act()
        return real(path, **kw)

    return reader


CHILD_FATES = {
    "exits at once": lambda: os._exit(0),
    "dies with a code": lambda: os._exit(3),
    "is killed": lambda: os.kill(os.getpid(), signal.SIGKILL),
    "raises a bug": lambda: 1 / 0,
    "runs out of memory": lambda: (_ for _ in ()).throw(MemoryError()),
}


@needs_fork
@pytest.mark.parametrize("fate", sorted(CHILD_FATES))
def test_a_child_that_fails_leaves_the_base_to_this_process(pair, forks, monkeypatch, fate):
    monkeypatch.setattr(paired_read, "read_run", _in_child(os.getpid(), pair[0], CHILD_FATES[fate]))
    before = open_fds()
    base, head = read_pair(*pair)
    assert len(forks) == 1 and open_fds() == before
    want_base, want_head = serial(*pair)
    assert_same_columns(base, want_base)
    assert_same_columns(head, want_head)


@needs_fork
def test_a_child_that_sends_what_does_not_unpickle_is_read_again(pair, forks, monkeypatch):
    monkeypatch.setattr(paired_read, "artefact_frame", lambda artefact: paired_read.ARTEFACT + b"not a pickle")
    base, _ = read_pair(*pair)
    assert len(forks) == 1
    assert_same_columns(base, read_run(pair[0]))


@needs_fork
def test_a_silent_child_is_killed_and_the_base_read_here(pair, forks, monkeypatch):
    monkeypatch.setattr(paired_read, "SILENT_SECONDS", 0.2)
    monkeypatch.setattr(paired_read, "SILENT_TIMES", 0.0)
    monkeypatch.setattr(paired_read, "read_run", _in_child(os.getpid(), pair[0], lambda: time.sleep(60)))
    started = time.monotonic()
    base, _ = read_pair(*pair)
    assert time.monotonic() - started < 30  # not the child's minute
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0], os.WNOHANG)
    assert_same_columns(base, read_run(pair[0]))


@needs_fork
def test_a_bug_in_the_read_still_raises_here(pair, forks, monkeypatch):
    def broken(path, **kw):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(paired_read, "read_run", broken)
    with pytest.raises(ZeroDivisionError, match="a bug"):
        read_pair(*pair)
    assert len(forks) == 1


@needs_fork
def test_a_bad_head_after_a_good_base_is_the_heads_error(pair, forks):
    _bad(pair[1])
    with pytest.raises(InputErrors) as caught:
        read_pair(*pair)
    assert caught.value.lines() == _error(pair[1]).lines()


def test_one_file_after_the_other_past_the_bound(pair, forks, monkeypatch):
    size = sum(os.path.getsize(p) for p in pair)
    monkeypatch.setattr(paired_read, "PAIR_BOUND", size)
    assert parallel_possible(*pair) == (hasattr(os, "sched_getaffinity") and len(os.sched_getaffinity(0)) > 1)
    monkeypatch.setattr(paired_read, "PAIR_BOUND", size - 1)
    assert not parallel_possible(*pair)
    base, head = read_pair(*pair)
    assert not forks
    assert all(x is y for x, y in zip(head.columns.ids[:2], base.columns.ids[:2]))  # q1, q2 shared
    assert_same_columns(base, serial(*pair)[0])


def test_one_file_after_the_other_without_fork(pair, monkeypatch):
    monkeypatch.delattr(os, "fork")
    assert not parallel_possible(*pair)
    base, head = read_pair(*pair)
    assert_same_columns(head, serial(*pair)[1])


def test_one_file_after_the_other_with_another_thread_running(pair, forks):
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not parallel_possible(*pair)
        read_pair(*pair)
    finally:
        stop.set()
        other.join()
    assert not forks


@pytest.mark.parametrize("kind", ["a FIFO", "missing"])
def test_a_path_not_a_regular_file_is_the_serial_reads_error(pair, tmp_path, forks, kind):
    other = str(tmp_path / "other")
    if kind == "a FIFO":
        os.mkfifo(other)
    assert not parallel_possible(other, pair[1])
    with pytest.raises(InputError) as caught:
        read_pair(other, pair[1])
    assert str(caught.value) == str(_error(other)) and not forks


@needs_fork
def test_an_interrupted_head_read_leaves_no_child_and_no_pipe(pair, forks, monkeypatch):
    real, parent = artefact_file.read_run, os.getpid()

    def reader(path, **kw):
        if os.getpid() == parent and str(path) == pair[1]:
            raise KeyboardInterrupt
        if os.getpid() != parent:
            time.sleep(60)  # still reading when the parent is interrupted
        return real(path, **kw)

    monkeypatch.setattr(paired_read, "read_run", reader)
    before = open_fds()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        read_pair(*pair)
    assert time.monotonic() - started < 30 and len(forks) == 1  # the child killed, not waited for
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0], os.WNOHANG)
    assert open_fds() == before


@needs_fork
def test_a_fork_refused_by_the_system_reads_one_file_after_the_other(pair, monkeypatch):
    def refused():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    before = open_fds()
    base, head = read_pair(*pair)
    assert open_fds() == before
    assert all(x is y for x, y in zip(head.columns.ids[:2], base.columns.ids[:2]))  # read in turn
    assert_same_columns(base, serial(*pair)[0])
