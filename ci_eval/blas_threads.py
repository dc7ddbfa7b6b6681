"""numpy's OpenBLAS on one thread in ci-eval's own process, and in no process it starts.

When numpy is imported, OpenBLAS starts a thread for each core, and the threads spin before
they sleep: on two cores that is about 90 ms of CPU at every start of ci-eval, more than
numpy's import itself and more with more cores, spent beside the retriever on a CI runner.
ci-eval does no matrix work that a thread would speed up (its one floating-point product,
`gold mine`'s clustering of question vectors, is a few milliseconds), so its own process asks
OpenBLAS for one thread.

Measured without it, alternated (``benchmarks/bench_mechanisms.py``; docs/benchmarks.md, "Speed
mechanisms, measured"): ``check`` takes 1.57x the CPU on an idle machine and, with both cores
busy, 1.15x the wall; at 100,000 questions it is under 2 %. The test suite, which starts
ci-eval about a thousand times, is where it shows most.

The retriever and every other process ci-eval starts get the environment as the user set
it (``without_secrets`` applies ``as_the_user_set``); a value the user set is kept everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping

VARIABLE = "OPENBLAS_NUM_THREADS"

# Whether VARIABLE is ci-eval's own setting (set by one_thread_here), not the user's.
_SET_HERE: list[bool] = [False]


def one_thread_here(environ: MutableMapping[str, str] = os.environ) -> None:
    """Ask for one OpenBLAS thread in this process, unless the user chose a number. Called
    at the process's entry point, before anything imports numpy."""
    if VARIABLE not in environ:
        environ[VARIABLE] = "1"
        _SET_HERE[0] = True


def as_the_user_set(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the setting ``one_thread_here`` made: what a child should see."""
    return {k: v for k, v in environ.items() if not (_SET_HERE[0] and k == VARIABLE)}
