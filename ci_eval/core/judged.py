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
from dataclasses import dataclass

MEASURED = ("ok", "error")  # the statuses the means are over (core/evaluation.py)


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


def _top(question: dict, k: int) -> list[str]:
    return [r["id"] for r in (question.get("ranking") or [])[:k]]


@dataclass(frozen=True)
class JudgedReport:
    """What the report says about judgements: the head's mean judged@k (and the base's),
    the unjudged results the head brought into the top k (not in the base's top k for that
    question), and the regressions whose new top-k results are all unjudged."""

    k: int
    head_mean: float | None
    base_mean: float | None
    new_unjudged: int
    questions: int
    suspects: frozenset[str]
    compared: bool = True  # False without a base: every top-k result counts as new


def artefact_judged_mean(artefact: dict) -> float | None:
    k = artefact["k"]
    return mean_judged(judged_at_k(_top(q, k), q.get("gold") or {}, k)
                       for q in artefact["questions"] if q.get("status") in MEASURED)


def judged_report(base: dict | None, head: dict, regressions: Iterable[str]) -> JudgedReport:
    """Computed from rankings and gold, so base artefacts written before judged@k existed
    are read the same way."""
    k = head["k"]
    base_top = {q["id"]: set(_top(q, k)) for q in (base or {}).get("questions", [])}
    new_unjudged, questions, suspects = 0, 0, set()
    wanted = set(regressions)
    for q in head["questions"]:
        if q.get("status") not in MEASURED:
            continue
        new = [c for c in _top(q, k) if c not in base_top.get(q["id"], set())]
        unjudged = unjudged_in_top_k(new, q.get("gold") or {}, k)
        new_unjudged += len(unjudged)
        questions += bool(unjudged)
        if q["id"] in wanted and new and len(unjudged) == len(new):
            suspects.add(q["id"])
    return JudgedReport(k, artefact_judged_mean(head), artefact_judged_mean(base) if base else None,
                        new_unjudged, questions, frozenset(suspects), base is not None)
