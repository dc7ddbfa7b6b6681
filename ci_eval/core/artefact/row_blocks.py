"""A block of version 2 question rows, checked, cut into fields: what the artefact reader's
fast path fills the question columns from a field at a time (QuestionColumns.add_block), and
the per-row overflow check the merge's line reader keeps.

The block is made by inputs/typed_rows.py, which decodes a piece of rows into the schema's
types and checks them; the core only holds its shape, so it stays free of decoding.
"""

from __future__ import annotations

import math

from ci_eval.core.artefact.question_row import FIELD


class RowBlock:
    """A checked block: ``fields``, one tuple per field of QUESTION_FIELDS over the rows;
    each ranking as a dict whose keys are its chunk ids, best first, those ids as one flat run
    and each ranking's length, and the gold pairs' ids and grades as flat runs with each row's count (``gold_lens``)."""

    __slots__ = ("fields", "rankings", "ranking_ids", "ranking_lens", "gold_ids", "gold_grades", "gold_lens")

    def __init__(self, fields, rankings: list, ids: list, gold):
        self.fields = fields
        self.rankings = rankings  # each row's chunk ids as a dict's keys, best first
        self.ranking_ids = ids  # the same ids as one flat run
        self.ranking_lens = list(map(len, rankings))
        _dicts, self.gold_ids, self.gold_grades = gold
        self.gold_lens = list(map(len, fields[FIELD["gold"]]))

    def __len__(self) -> int:
        return len(self.fields[0])

    def field(self, name: str) -> tuple:
        return self.fields[FIELD[name]]


def row_finite(row: list) -> bool:
    """Whether no number of a valid row overflowed to inf: then their sum is finite (a sum
    that overflows, or an integer too large for a float, only sends the row to the full
    parse, which decides)."""
    values = row[FIELD["metrics"]]
    try:
        total = sum(score for _, score in row[FIELD["ranking"]])
        total += sum(values) if None not in values else sum(v for v in values if v is not None)
        for extra in (row[FIELD["top_score"]], row[FIELD["latency_ms"]], row[FIELD["judged_at_k"]]):
            if extra is not None:
                total += extra
        return math.isfinite(total)  # an all-integer sum past a double overflows here
    except OverflowError:
        return False
