"""Keeping freed memory in the process while a large TREC file is parsed and judged.

The parser and the judge work a block at a time through numpy temporaries of a few
hundred kilobytes to a few dozen megabytes. With glibc's default, adaptive settings
these come and go through ``mmap``/``munmap`` or a heap that is trimmed back to the
system after each free, so every block's temporaries are new pages that the kernel
faults in and zeroes again: on a 300 MB run file that was about a quarter of the whole
process time, spent in the kernel. Inside ``held_heap`` freed memory stays in the heap
for the next block; when the outermost one ends, what was held is given back at once
and the heap is trimmed again as glibc would after blocks of that size.

Measured (benchmarks/bench_mechanisms.py --only evaluate --repeat 5, a shared two-core machine at
load 6 to 8): ``ci-eval evaluate -m all_trec`` on 20,000 queries x 100 results took 1.23x the wall
and 1.23x the CPU with this switched off (median 10.40 s / 1.63 s CPU against 8.42 s / 1.33 s).

Only glibc has these settings; elsewhere (or if they cannot be reached) this does
nothing, and nothing else depends on it.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3
_HOLD = 1 << 30  # free memory at the top of the heap kept up to this much
_PAD = 64 << 20  # the heap grows in steps of this much, not page by page
_MAPPED_FROM = 32 << 20  # only allocations this big get their own mapping (glibc's most)
# On the way out: what glibc's adaptive setting would be after freeing such an allocation
# (twice the mapping threshold), so later code is not trimmed more eagerly than before.
_TRIM_AFTER = 2 * _MAPPED_FROM

_depth = 0  # how many held_heap are open, in any thread
_lock = threading.Lock()


@functools.cache
def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None)
    except OSError:
        return None
    # Only glibc has gnu_get_libc_version, and the settings held_heap changes.
    return libc if hasattr(libc, "gnu_get_libc_version") else None


@contextlib.contextmanager
def held_heap():
    """Freed memory stays in the process until the outermost ``held_heap`` ends."""
    global _depth
    with _lock:
        libc = _glibc() if _depth == 0 else None
        if libc is not None:
            libc.mallopt(_M_MMAP_THRESHOLD, _MAPPED_FROM)
            libc.mallopt(_M_TOP_PAD, _PAD)
            libc.mallopt(_M_TRIM_THRESHOLD, _HOLD)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            libc = _glibc() if _depth == 0 else None
            if libc is not None:
                libc.mallopt(_M_TOP_PAD, 0)
                libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_AFTER)
                libc.malloc_trim(0)
