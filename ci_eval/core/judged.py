"""judged@k: how much of what the retriever put in the top k anyone ever judged.

A metric only knows the grades it was given: a chunk nobody judged counts as not relevant,
so a change that brings new chunks into the top k can read as a regression when the gold set
is merely missing labels (Buckley & Voorhees, "Retrieval evaluation with incomplete
information", SIGIR 2004). judged@k makes that visible.

Convention: the share of the top-k results *returned* that carry a judgement of any grade
(0 included). ir_measures' Judged@k divides by k instead; a RAG retriever that returns two
results for an off-topic question has judged both of them, not 40% of a list it never made.
A question with no results has no value (None).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence


def judged_at_k(ranking: Sequence[str], judged: Collection[str], k: int) -> float | None:
    top = list(ranking[:k])
    if not top:
        return None
    return sum(1 for chunk in top if chunk in judged) / len(top)


def unjudged_in_top_k(ranking: Sequence[str], judged: Collection[str], k: int) -> tuple[str, ...]:
    return tuple(chunk for chunk in ranking[:k] if chunk not in judged)


def mean_judged(values: Iterable[float | None]) -> float | None:
    """The mean over questions that returned something; None when none did."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
