"""Freed memory kept in the process while a TREC file is parsed and judged."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ci_eval.trec import heap

# In a fresh interpreter: ten 16 MB blocks live at once, freed, then ten again; the
# minor page faults of the second round (each new page is one).
_ROUNDS = """
import resource, sys
from ci_eval.trec import heap
def blocks():
    held = [bytearray(16 << 20) for _ in range(10)]
    for b in held:
        b[::4096] = bytes(len(b[::4096]))
def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    blocks()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
if sys.argv[1] == "held":
    with heap.held_heap():
        blocks()
        print(faults())
else:
    blocks()
    print(faults())
"""


def _second_round_faults(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", _ROUNDS, mode], capture_output=True,
                          text=True, check=True)
    return int(done.stdout)


@pytest.mark.skipif(heap._glibc() is None, reason="the held heap needs glibc's malloc")
def test_freed_blocks_are_reused_not_faulted_in_again():
    pages = 10 * (16 << 20) // 4096
    # By default the second round is new pages again (the first round's were given back);
    # held, it reuses the first round's memory.
    assert _second_round_faults("default") > pages // 2
    assert _second_round_faults("held") < pages // 20


def test_nested_holds_end_with_the_outermost(monkeypatch):
    calls = []

    class Libc:
        def mallopt(self, what, value):
            calls.append(("mallopt", what, value))
            return 1

        def malloc_trim(self, pad):
            calls.append(("trim", pad))
            return 1

    monkeypatch.setattr(heap, "_glibc", Libc)
    with heap.held_heap():
        with heap.held_heap():
            inner = list(calls)
        assert calls == inner  # the inner one neither set nor restored anything
    assert calls[-1] == ("trim", 0)
    assert ("mallopt", heap._M_TRIM_THRESHOLD, heap._TRIM_AFTER) in calls
    assert heap._depth == 0


def test_without_glibc_it_does_nothing(monkeypatch):
    monkeypatch.setattr(heap, "_glibc", lambda: None)
    with heap.held_heap():
        assert heap._depth == 1
    assert heap._depth == 0
