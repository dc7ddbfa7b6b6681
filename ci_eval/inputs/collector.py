"""Pausing Python's cycle collector while a reader builds objects that all stay alive."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


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
