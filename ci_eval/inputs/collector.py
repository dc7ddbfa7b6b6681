"""Python's cycle collector spaced out while a run or a comparison streams its rows."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Young objects between two collections while a run streams its rows (the default is 700).
# Measured at 100,000 questions against the tree without it (docs/benchmarks.md, "Speed
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
