"""A block of version 2 rows holds each field over its rows, and ``row_finite`` (the merge's
line reader's check) finds a number overflowed to inf by the sum of a row's numbers. Whether a
piece of rows becomes a block is inputs/typed_rows.py's verdict, held to the per-row one in
tests/inputs/test_typed_rows.py."""

from __future__ import annotations

from ci_eval.core.artefact.question_row import FIELD
from ci_eval.core.artefact.row_blocks import RowBlock, row_finite


def test_a_block_holds_each_field_its_rankings_and_its_gold_pairs():
    rows = [("q1", "", [], False, "ok", [("g", 1)], [], [], 1, 0.5, None, None, None, None, [], [("g", 0.5), ("h", 0.2)]),
            ("q2", "", [], False, "ok", [], [], [], None, None, None, None, None, None, [], [])]
    fields = list(zip(*rows))
    rankings = [dict(r) for r in fields[FIELD["ranking"]]]
    block = RowBlock(fields, rankings, ["g", "h"], ([{"g": 1}, {}], ["g"], [1]))
    assert len(block) == 2 and block.field("id") == ("q1", "q2")
    assert block.ranking_lens == [2, 0] and block.gold_lens == [1, 0]
    assert block.gold_ids == ["g"] and block.gold_grades == [1]


def test_a_number_overflowed_or_too_large_makes_a_row_not_finite():
    row = ["q", "", [], False, "ok", [], [], [], None, None, None, None, None, None, [], [["a", 1e308], ["b", 1e308]]]
    assert not row_finite(row)  # the sum overflows
    row[FIELD["ranking"]] = [["a", 10 ** 400], ["b", 0.5]]  # an integer past the largest float
    assert not row_finite(row)
    row[FIELD["ranking"]] = [["a", 10 ** 400], ["b", 1]]  # integers only: the sum stays an int
    assert not row_finite(row)
    row[FIELD["ranking"]] = [["a", 1e300], ["b", -1e300]]  # large, but the sum is finite
    assert row_finite(row)
    row[FIELD["ranking"]], row[FIELD["latency_ms"]] = [["a", 0.5]], float("inf")
    assert not row_finite(row)
