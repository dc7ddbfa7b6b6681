"""Pausing Python's cycle collector while a reader builds objects that all stay alive."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


# Measured (benchmarks/bench_mechanisms.py): with the collector left running, the action at
# 100,000 questions took 1.18x the wall (1.43x before this round's other removals; compare
# 1.07x, run 1.07x); on the msgspec reader 1.04x on the action, 0.96x on compare. Under
# the 20 % bar, but its freeze also spares the spaced collections (below) the gold set: it
# goes only once `run` and the group are measured without it (docs/design.md).
@contextmanager
def collector_paused() -> Iterator[None]:
    """Reading allocates millions of objects that all stay alive, no cycle among them: the
    cycle collector would walk the growing heap again and again (reading 100,000 questions
    took twice as long with it), so it waits until the read is done; then what was read is
    moved out of its sight (``gc.freeze``), so later collections do not walk it either."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


# Young objects between two collections while a run streams its rows (the default is 700).
# Measured at 100,000 questions against the tree without it (docs/design.md, "Speed
# mechanisms, measured"): `run` 1.30x slower and `compare` 1.16x without it.
RUN_THRESHOLD = 100_000


@contextmanager
def collections_spaced(young: int = RUN_THRESHOLD) -> Iterator[None]:
    """A run makes a few dozen short-lived containers a question (each result, its pairs,
    its row) and keeps none: they are freed as soon as the row is written, and the cycle
    collector, run every 700 of them by default, finds nothing (a seventh of a run's CPU
    time at 100,000 questions). Collections still happen, every ``young`` new containers,
    so a cycle made by a retriever's code is still freed."""
    old = gc.get_threshold()
    gc.set_threshold(young, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
