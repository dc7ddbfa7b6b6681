"""The metric table: each question's metric values as a table row that reads like the dict
it replaces, and the columns the comparison takes from it."""

from __future__ import annotations

import math

import pytest

from ci_eval.core.measure.metric_table import MetricTable

NAMES = ("hit@5", "mrr", "map")


def _table(*rows):
    table = MetricTable(NAMES)
    read = [table.add(values) for values in rows]
    return table.finish(), read


def test_a_row_reads_as_the_dict_of_its_recorded_values():
    _, (full, partial, unmeasured) = _table([1, 0.5, 1 / 3], [0, None, 0.25], [])
    assert dict(full) == {"hit@5": 1, "mrr": 0.5, "map": 1 / 3}
    assert dict(partial) == {"hit@5": 0, "map": 0.25}  # null: not recorded
    assert dict(unmeasured) == {} and len(unmeasured) == 0
    assert partial.get("mrr") is None and "mrr" not in partial and "ndcg@5" not in full
    assert partial.get("mrr", -1) == -1 and full.get("ndcg@5", -2) == -2 and partial.get("map", -1) == 0.25
    with pytest.raises(KeyError):
        partial["mrr"]


def test_a_row_reads_the_same_before_the_table_is_finished():
    table = MetricTable(NAMES)
    row = table.add([1, None, 0.75])
    assert dict(row) == {"hit@5": 1, "map": 0.75}
    table.finish()
    assert dict(row) == {"hit@5": 1, "map": 0.75}


def test_a_column_is_every_questions_value_with_zero_where_not_recorded():
    table, rows = _table([1, 0.5, 1 / 3], [0, None, 0.25], [])
    assert table.column("mrr").tolist() == [0.5, 0.0, 0.0]
    assert table.column("map").tolist() == [1 / 3, 0.25, 0.0]
    assert table.column("ndcg@5").tolist() == [0.0] * len(rows)  # a metric the run lacks


def test_a_table_of_no_metrics_holds_no_values():
    table = MetricTable(())
    row = table.add([])
    table.finish()
    assert dict(row) == {} and table.column("mrr").tolist() == [0.0]


def test_not_a_number_is_never_stored_as_a_value():
    _, (row,) = _table([None, None, None])
    assert all(not math.isnan(v) for v in row.values())


def test_a_negative_zero_reads_in_a_column_as_zero_as_value_gives_it():
    table, _ = _table([-0.0, 0.0, 0.0])
    assert math.copysign(1.0, table.column("hit@5")[0]) == 1.0
