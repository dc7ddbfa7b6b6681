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

from ci_eval.core.artefact import Artefact


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


def _top_check(artefact: Artefact, k: int) -> None:
    """A question's top k must have been kept (asked only when there are questions)."""
    if len(artefact.columns) and artefact.depth < k:
        raise ValueError(f"the artefact was read keeping the top {artefact.depth} results, "
                         f"judged@k needs {k}: read it with read_artefact(data, top={k})")


def _measured(columns) -> list[int]:
    codes = columns.measured_codes()
    return [i for i, code in enumerate(columns.status) if code in codes]


def artefact_judged_mean(artefact: Artefact) -> float | None:
    """Read from the columns: each measured question's kept top ids and gold ids (judged at
    any grade, stale ids included)."""
    k = artefact.header.k
    _top_check(artefact, k)
    columns = artefact.columns
    return mean_judged(judged_at_k(columns.top(i)[:k], frozenset(columns.gold_id_list(i)), k)
                       for i in _measured(columns))


def judged_report(base: Artefact | None, head: Artefact, regressions: Iterable[str]) -> JudgedReport:
    """Computed from the top of the rankings and the gold, so base artefacts written before
    judged@k existed are read the same way."""
    k = head.header.k
    _top_check(head, k)
    hc = head.columns
    if base is not None:
        _top_check(base, k)
        bc, where = base.columns, {qid: i for i, qid in enumerate(base.columns.ids)}
    new_unjudged, questions, suspects = 0, 0, set()
    wanted = set(regressions)
    for j in _measured(hc):
        qid, i = hc.ids[j], where.get(hc.ids[j]) if base is not None else None
        base_top = bc.top(i)[:k] if i is not None else ()
        new = [c for c in hc.top(j)[:k] if c not in base_top]
        unjudged = unjudged_in_top_k(new, frozenset(hc.gold_id_list(j)), k)
        new_unjudged += len(unjudged)
        questions += bool(unjudged)
        if qid in wanted and new and len(unjudged) == len(new):
            suspects.add(qid)
    return JudgedReport(k, artefact_judged_mean(head), artefact_judged_mean(base) if base else None,
                        new_unjudged, questions, frozenset(suspects), base is not None)
