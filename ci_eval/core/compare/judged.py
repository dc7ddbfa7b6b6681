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
from itertools import repeat

import numpy as np

from ci_eval.core.artefact.artefact import Artefact
from ci_eval.core.artefact.column_views import (
    IdCodes,
    blocks,
    comparison_codes,
    gold_runs,
    measured_rows,
    member,
    top_runs,
)
from ci_eval.core.artefact.question_columns import same_ids


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


def _judged_mean(shares: np.ndarray) -> float | None:
    """``mean_judged`` over per-question shares (NaN: nothing returned), summed in question
    order as that mean sums them, so the value is the same to the last bit."""
    present = shares[~np.isnan(shares)].tolist()
    return sum(present) / len(present) if present else None


def _shares(columns, rows: np.ndarray, k: int, codes: IdCodes):
    """For the questions at ``rows``: their top-k runs' owners, the top ids' codes, whether
    each is judged (in its own question's gold), and each question's judged@k (NaN when it
    returned nothing)."""
    positions, owner = top_runs(columns, rows, k)
    top = codes.of(columns.top_ids, positions)
    gold_positions, gold_owner = gold_runs(columns, rows)
    judged = member(owner, top, gold_owner, codes.of(columns.gold_ids, gold_positions))
    returned = np.bincount(owner, minlength=len(rows))
    hits = np.bincount(owner, weights=judged, minlength=len(rows))
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(returned > 0, hits / np.maximum(returned, 1), np.nan)
    return owner, top, judged, shares


def _mean(columns, k: int, codes=None) -> float | None:
    """The mean judged@k of the measured questions, a block at a time (``codes``: what
    gives each block its id codes, ``comparison_codes``)."""
    rows = measured_rows(columns)
    codes = codes or comparison_codes(columns.top_ids, columns.gold_ids)
    parts = [_shares(columns, rows[a:b], k, codes())[3] for a, b in blocks(len(rows))]
    return _judged_mean(np.concatenate(parts) if parts else np.zeros(0))


def artefact_judged_mean(artefact: Artefact) -> float | None:
    """Read from the columns: each measured question's kept top ids and gold ids (judged at
    any grade, stale ids included)."""
    k = artefact.header.k
    _top_check(artefact, k)
    return _mean(artefact.columns, k)


def _base_rows(base: Artefact, head: Artefact, rows: np.ndarray) -> np.ndarray:
    """The base position of each head question at ``rows`` (by id), -1 when base lacks it."""
    if same_ids(base.columns, head.columns):
        return rows.astype(np.int64)
    ids = head.columns.ids
    where = {qid: i for i, qid in enumerate(base.columns.ids)}
    return np.fromiter(map(where.get, map(ids.__getitem__, rows.tolist()), repeat(-1)),
                       dtype=np.int64, count=len(rows))


def _block_counts(head, base, rows: np.ndarray, at_base, k: int, codes):
    """For the head questions at ``rows`` (base positions ``at_base``, None without a base):
    each one's judged@k, its new results and how many of them are unjudged."""
    owner, top, judged, shares = _shares(head.columns, rows, k, codes)
    new = np.ones(len(owner), dtype=bool)
    if base is not None:
        base_positions, base_owner = top_runs(base.columns, at_base, k)
        new = ~member(owner, top, base_owner, codes.of(base.columns.top_ids, base_positions))
    return (shares, np.bincount(owner, weights=new, minlength=len(rows)),
            np.bincount(owner, weights=new & ~judged, minlength=len(rows)))


def judged_report(base: Artefact | None, head: Artefact, regressions: Iterable[str]) -> JudgedReport:
    """Computed from the top of the rankings and the gold, so base artefacts written before
    judged@k existed are read the same way. Over the columns a block of questions at once:
    a head top-k id is new when its question's base top k lacks it, and unjudged when its
    gold lacks it."""
    k = head.header.k
    _top_check(head, k)
    if base is not None:
        _top_check(base, k)
    hc = head.columns
    rows = measured_rows(hc)
    at_base = _base_rows(base, head, rows) if base is not None else None
    new_unjudged, questions, suspect, shares = 0, 0, [], [np.zeros(0)]
    both = (hc, base.columns) if base is not None else (hc,)
    codes = comparison_codes(*(ids for c in both for ids in (c.top_ids, c.gold_ids)))
    for a, b in blocks(len(rows)):
        share, new, unjudged = _block_counts(head, base, rows[a:b],
                                             at_base[a:b] if base is not None else None, k,
                                             codes())
        shares.append(share)
        new_unjudged, questions = new_unjudged + int(unjudged.sum()), questions + int((unjudged > 0).sum())
        suspect += rows[a:b][(new > 0) & (unjudged == new)].tolist()
    wanted = set(regressions)
    suspects = frozenset(hc.ids[j] for j in suspect if hc.ids[j] in wanted)
    return JudgedReport(k, _judged_mean(np.concatenate(shares)),
                        _mean(base.columns, k, codes) if base is not None else None,
                        new_unjudged, questions, suspects, base is not None)
