"""How far a judge's suggested grades agree with a person's: Cohen's kappa, its 95 % interval
and the confusion table. Pure functions, no I/O.

Kappa is unweighted: grades 0 to 3 are four categories, and a suggestion of 2 for a chunk
the person graded 3 counts as a disagreement like any other. The interval is
``kappa +- 1.96 * se``, where ``se`` is the square root of the large-sample variance of
kappa of Fleiss, Cohen and Everitt (1969), "Large sample standard errors of kappa and
weighted kappa", Psychological Bulletin 72(5), in the form that does not assume kappa is 0:

    var = ( sum_i p_ii * (1 - (p_i. + p_.i) * (1 - k))^2
          + (1 - k)^2 * sum_{i != j} p_ij * (p_.i + p_j.)^2
          - (k - pe * (1 - k))^2 ) / (n * (1 - pe)^2)

with ``p_ij`` the share of pairs suggested ``i`` and given ``j``, ``p_i.`` the share
suggested ``i`` (a row), ``p_.j`` the share given ``j`` (a column), ``pe`` the agreement
expected by chance, ``sum_i p_i. * p_.i``. The interval is clipped to [-1, 1]. With few
pairs it is wide, as it should be; read its lower bound.

When chance agreement is total (every pair in one grade on both sides) kappa is not defined
(0/0): it is None, and so is the interval.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ci_eval.core.gold.judgement import MAX_GRADE

GRADES = tuple(range(MAX_GRADE + 1))
Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


@dataclass(frozen=True)
class Agreement:
    n: int  # pairs counted
    grades: tuple[int, ...]  # the categories, in the table's order
    table: tuple[tuple[int, ...], ...]  # table[i][j]: suggested grades[i], given grades[j]
    observed: float | None  # share of pairs where the person gave the suggested grade
    expected: float | None  # the same share expected by chance from the margins
    kappa: float | None
    low: float | None  # 95 % interval
    high: float | None

    def as_dict(self) -> dict:
        """For the page and the gold set's provenance: numbers rounded to 4 places."""
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {"pairs": self.n, "kappa": r(self.kappa), "interval95": [r(self.low), r(self.high)],
                "observed": r(self.observed), "expected": r(self.expected),
                "grades": list(self.grades), "confusion": [list(row) for row in self.table],
                "rows": "suggested", "columns": "given", "method": "Cohen's kappa, Fleiss-Cohen-Everitt 1969 variance"}


def confusion(pairs: Iterable[tuple[int, int]], grades: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Counts of (suggested, given) pairs; a pair with a grade outside ``grades`` is an error."""
    at = {g: i for i, g in enumerate(grades)}
    rows = [[0] * len(grades) for _ in grades]
    for (suggested, given), n in Counter(pairs).items():
        rows[at[suggested]][at[given]] += n
    return tuple(tuple(row) for row in rows)


def kappa_of_table(table: tuple[tuple[int, ...], ...]) -> tuple[float | None, float | None, float | None, float | None,
                                                             float | None]:
    """(observed, expected, kappa, low, high) of a square table of counts."""
    n = sum(sum(row) for row in table)
    if n == 0:
        return None, None, None, None, None
    size = len(table)
    p = [[table[i][j] / n for j in range(size)] for i in range(size)]
    rows = [sum(p[i]) for i in range(size)]
    cols = [sum(p[i][j] for i in range(size)) for j in range(size)]
    po = sum(p[i][i] for i in range(size))
    pe = sum(rows[i] * cols[i] for i in range(size))
    if pe >= 1.0 - 1e-12:
        return po, pe, None, None, None
    k = (po - pe) / (1 - pe)
    diagonal = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - k)) ** 2 for i in range(size))
    off = sum(p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(size) for j in range(size) if i != j)
    var = (diagonal + (1 - k) ** 2 * off - (k - pe * (1 - k)) ** 2) / (n * (1 - pe) ** 2)
    se = math.sqrt(max(var, 0.0))
    return po, pe, k, max(-1.0, k - Z95 * se), min(1.0, k + Z95 * se)


def agreement(pairs: Iterable[tuple[int, int]], grades: tuple[int, ...] = GRADES) -> Agreement:
    """Kappa, interval and table of (suggested, given) grade pairs."""
    table = confusion(pairs, grades)
    observed, expected, k, low, high = kappa_of_table(table)
    return Agreement(sum(sum(row) for row in table), grades, table, observed, expected, k, low, high)


def suggestion_pairs(doc: dict) -> list[tuple[int, int]]:
    """(suggested, given) for every chunk record of the gold set's provenance that holds
    both: a person's grade (not "can't tell") made with a judge's suggestion known."""
    # Once a key over every record of the file: kept to plain loops and set lookups (a bool
    # is no grade: type(True) is bool, not int).
    valid = frozenset(GRADES)
    out = []
    for record in (doc.get("provenance") or {}).get("judgements", {}).values():
        chunks = record.get("chunks") if type(record) is dict else None
        if type(chunks) is not dict:
            continue
        for rec in chunks.values():
            if type(rec) is dict and "suggested" in rec:
                given, suggested = rec.get("grade"), rec["suggested"]
                if type(given) is int and type(suggested) is int and given in valid and suggested in valid:
                    out.append((suggested, given))
    return out


def record_suggestion(doc: dict, qid: str, chunk: str, suggested: int | None, judge: str) -> dict:
    """``doc`` (a grade of ``chunk`` for ``qid`` just applied) with the judge's suggestion
    beside the person's grade in the chunk's record (``"suggested"``, when there was one) and
    ``provenance.suggestions`` = ``{"judge", "agreement"}`` over every such record. Returns
    a new document; ``doc`` is left alone. The suggestion is never the grade: the grade is
    the person's key."""
    prov = dict(doc.get("provenance") or {})
    judgements = dict(prov.get("judgements", {}))
    record = dict(judgements.get(qid, {}))
    chunks = dict(record.get("chunks", {}))
    if suggested is not None and chunk in chunks:
        chunks[chunk] = {**chunks[chunk], "suggested": suggested}
        record["chunks"] = chunks
        judgements[qid] = record
        prov["judgements"] = judgements
    new = {**doc, "provenance": prov}
    prov["suggestions"] = {"judge": judge, "agreement": agreement(suggestion_pairs(new)).as_dict()}
    return new
