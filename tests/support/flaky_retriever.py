"""A python retriever that is deterministic for some questions and not for others, for
`ci-eval run --repeat`: each question's pass number is counted in a file under
$FLAKY_PASSES_DIR (the worker process keeps no state the test could not see).

Its rule, which the tests also read to derive what a repeated run must record:
- a question with "steady" in it gets the same ranking every pass;
- "shuffle": the chunks below the first swap places on even passes (the ranking changes,
  the first gold chunk's rank does not);
- "flip": every pass after the first ranks the gold chunk last (rank and hit@1 change);
- "blink": even passes rank the gold chunk last, odd passes first;
- "fails": every pass after the first raises ``FAILURE``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

CHUNKS = ["alpha", "beta", "gamma"]  # "alpha" is every question's gold chunk
FAILURE = "the index went away"


def ranking_for(question: str, number: int) -> list[str]:
    """The ids asked for ``question`` on pass ``number`` (1-based)."""
    if "shuffle" in question and number % 2 == 0:
        return ["alpha", "gamma", "beta"]
    if ("flip" in question and number > 1) or ("blink" in question and number % 2 == 0):
        return ["gamma", "beta", "alpha"]
    return list(CHUNKS)


def _next_pass(question: str) -> int:
    name = hashlib.sha256(question.encode()).hexdigest()[:16]
    path = Path(os.environ["FLAKY_PASSES_DIR"]) / name
    with path.open("a") as f:
        f.write(".")
    return path.stat().st_size


def flaky(question: str, k: int, **params) -> list[tuple[str, float]]:
    number = _next_pass(question)
    if "fails" in question and number > 1:
        raise ConnectionError(FAILURE)
    ids = ranking_for(question, number)[:k]
    return [(cid, 1.0 - position / 10) for position, cid in enumerate(ids)]
