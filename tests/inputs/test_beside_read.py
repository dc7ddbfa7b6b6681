"""A downloaded artefact parsed by a real second interpreter: the same artefact and the same
errors as the parse in this process, and that parse whenever the child steps aside."""

from __future__ import annotations

import subprocess
import sys

import pytest
from factories import ranked_with_gold_at as at
from factories import spec
from v2_files import assert_same_columns, write_v2

from ci_eval.errors import InputError
from ci_eval.inputs import beside_read
from ci_eval.inputs.artefact_file import run_from_bytes
from ci_eval.inputs.beside_read import run_from_bytes_beside

SOURCE = "artifact ci-eval (id 7) of run 42"
SPECS = [spec("q1", {"a": 2, "b": 1}, ["b", "x", "a"], tags=["faq"]), spec("q2", ["g"], at(3)),
         spec("q3", ["g"], error="timeout after 30 s"), spec("u1", unanswerable=True, ranking=["z"]),
         spec("s1", ["g", "h"], at(2, "h"), stale=["g"]), spec("q4", ["g"], at(1), tags=["how-to"])]

needs_two_cpus = pytest.mark.skipif(not beside_read.possible(),
                                    reason="a second interpreter is only used with two usable CPUs")


@pytest.fixture
def raw(tmp_path) -> bytes:
    path = tmp_path / "run.json"
    write_v2(path, SPECS)
    return path.read_bytes()


@pytest.fixture
def children(monkeypatch):
    """Every child the beside read starts, each of any size (the threshold lifted)."""
    monkeypatch.setattr(beside_read, "BESIDE_FROM", 0)
    real, started = subprocess.Popen, []

    def popen(*args, **kwargs):
        child = real(*args, **kwargs)
        started.append(child)
        return child

    monkeypatch.setattr(beside_read.subprocess, "Popen", popen)
    return started


def _answering(monkeypatch, script: str) -> None:
    """The child replaced by a program that reads its stdin and runs ``script``."""
    monkeypatch.setattr(beside_read, "_command", lambda source: [
        sys.executable, "-c", f"import sys; sys.stdin.buffer.read(); {script}"])


@needs_two_cpus
def test_the_child_parses_what_this_process_would(raw, children):
    parsed = run_from_bytes_beside(raw, SOURCE)
    assert len(children) == 1 and children[0].returncode == 0
    want = run_from_bytes(raw, SOURCE)
    want.columns.done_reading()
    assert_same_columns(parsed, want)


@needs_two_cpus
@pytest.mark.parametrize("damage", [lambda raw: raw[: len(raw) // 2],
                                    lambda raw: raw.replace(b'"q2"', b'"q1"', 1),
                                    lambda raw: b"\xff" + raw])
def test_a_bad_artefact_raises_the_error_this_process_would(raw, children, damage):
    bad = damage(raw)
    with pytest.raises(InputError) as here:
        run_from_bytes(bad, SOURCE)
    with pytest.raises(InputError) as there:
        run_from_bytes_beside(bad, SOURCE)
    assert len(children) == 1 and children[0].returncode == 0
    assert str(there.value) == str(here.value) and type(there.value) is type(here.value)
    assert SOURCE in str(there.value)


@needs_two_cpus
@pytest.mark.parametrize("script", ["sys.exit(3)",
                                    "sys.stdout.buffer.write(b'Anot a pickle')",
                                    "sys.stdout.buffer.write(b'Xwhat is this')",
                                    "import pickle; sys.stdout.buffer.write(b'A' + pickle.dumps([1, 2]))"])
def test_a_child_that_fails_or_answers_nonsense_leaves_the_parse_here(raw, children, monkeypatch, script):
    _answering(monkeypatch, script)
    parsed = run_from_bytes_beside(raw, SOURCE)
    assert len(children) == 1 and children[0].returncode is not None
    assert_same_columns(parsed, run_from_bytes(raw, SOURCE))


@needs_two_cpus
def test_a_stuck_child_is_killed_and_the_parse_done_here(raw, children, monkeypatch):
    monkeypatch.setattr(beside_read, "STUCK_SECONDS", 0.5)
    _answering(monkeypatch, "import time; time.sleep(60)")
    parsed = run_from_bytes_beside(raw, SOURCE)
    [child] = children
    assert child.returncode is not None and child.returncode < 0  # killed, and reaped
    assert_same_columns(parsed, run_from_bytes(raw, SOURCE))


def test_a_child_that_cannot_start_leaves_the_parse_here(raw, monkeypatch):
    monkeypatch.setattr(beside_read, "BESIDE_FROM", 0)
    monkeypatch.setattr(beside_read, "possible", lambda: True)
    monkeypatch.setattr(beside_read, "_command", lambda source: ["/nonexistent/python"])
    real, refused = subprocess.Popen, []

    def popen(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except OSError as exc:
            refused.append(exc)
            raise

    monkeypatch.setattr(beside_read.subprocess, "Popen", popen)
    assert_same_columns(run_from_bytes_beside(raw, SOURCE), run_from_bytes(raw, SOURCE))
    assert len(refused) == 1  # the start was tried, and failed


def test_a_small_artefact_is_parsed_here(raw, monkeypatch):
    def popen(*args, **kwargs):
        raise AssertionError("no child for an artefact under the threshold")

    monkeypatch.setattr(beside_read.subprocess, "Popen", popen)
    assert len(raw) < beside_read.BESIDE_FROM
    assert_same_columns(run_from_bytes_beside(raw, SOURCE), run_from_bytes(raw, SOURCE))
