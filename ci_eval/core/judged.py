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

from ci_eval.core.artefact import Artefact, QuestionResult


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


def _judged(q: QuestionResult) -> frozenset[str]:
    return frozenset(cid for cid, _ in q.gold)  # judged at any grade, stale ids included


def _top(q: QuestionResult, artefact: Artefact, k: int) -> tuple[str, ...]:
    if artefact.depth < k:
        raise ValueError(f"the artefact was read keeping the top {artefact.depth} results, "
                         f"judged@k needs {k}: read it with read_artefact(data, top={k})")
    return q.top[:k]


def artefact_judged_mean(artefact: Artefact) -> float | None:
    k = artefact.header.k
    return mean_judged(judged_at_k(_top(q, artefact, k), _judged(q), k)
                       for q in artefact.questions if q.measured)


def judged_report(base: Artefact | None, head: Artefact, regressions: Iterable[str]) -> JudgedReport:
    """Computed from the top of the rankings and the gold, so base artefacts written before
    judged@k existed are read the same way."""
    k = head.header.k
    # each base question's top k as the tuple it is kept in (k entries: a set per question
    # would cost more to build and hold than the few comparisons it saves)
    base_top = {q.id: _top(q, base, k) for q in base.questions} if base is not None else {}
    new_unjudged, questions, suspects = 0, 0, set()
    wanted = set(regressions)
    for q in head.questions:
        if not q.measured:
            continue
        new = [c for c in _top(q, head, k) if c not in base_top.get(q.id, ())]
        unjudged = unjudged_in_top_k(new, _judged(q), k)
        new_unjudged += len(unjudged)
        questions += bool(unjudged)
        if q.id in wanted and new and len(unjudged) == len(new):
            suspects.add(q.id)
    return JudgedReport(k, artefact_judged_mean(head), artefact_judged_mean(base) if base else None,
                        new_unjudged, questions, frozenset(suspects), base is not None)
