"""A block of version 2 rows checked field by field over the whole block says what the
per-row path says of its rows (the schema's row check, the meaning checks, no number
overflowed): accepted exactly when every row is, for valid rows, rows one thing away from
valid, and rows holding subclasses of json's types."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from v2_rows import METRICS, NUMBERS, ROWS

from ci_eval.core.artefact.question_row import FIELD, QUESTION_FIELDS
from ci_eval.core.artefact.row_blocks import checked_block, row_acceptable


class Str(str):
    pass


class List(list):
    pass


class Int(int):
    pass


class Float(float):
    pass


WRONG = (st.none() | st.booleans() | NUMBERS | st.sampled_from(["", "x", "ok", "a" * 201, "b" * 1001, -1, 2])
         | st.lists(st.sampled_from(["t", 1, None, True, 0.5, 7]), max_size=3)
         | st.lists(st.lists(st.sampled_from(["c", 1, 2.5, None, True]), max_size=3), max_size=2)
         | st.just({"id": "c"}))


def _subclassed(value, depth: int = 0):
    """The value with its own type replaced by a subclass of it (list, str, int, float)."""
    kind = type(value)
    if kind is list:
        return List(value) if depth == 0 else List([_subclassed(v, depth - 1) for v in value])
    return {str: Str, int: Int, float: Float}.get(kind, lambda v: v)(value)


def _nested(row: list, position: int, how: str, value) -> None:
    """One thing wrong inside a list field: a value appended, an id repeated, a pair off."""
    inner = row[position]
    if how == "append":
        row[position] = [*inner, value]
    elif how == "repeat" and inner:
        row[position] = [*inner, list(inner[0]) if isinstance(inner[0], list) else inner[0]]
    elif how == "pair":
        row[position] = [*inner, ["c", value]]
    elif how == "subclass" and inner:
        row[position] = [*inner[:-1], _subclassed(inner[-1], 1)]


MUTATIONS = st.tuples(st.integers(0, len(QUESTION_FIELDS) - 1),
                      st.sampled_from(["set", "drop", "add", "append", "repeat", "pair", "subclass", "whole"]),
                      WRONG)


def _mutated(row: list, mutation) -> list:
    position, how, value = mutation
    row = list(row)
    if how == "set":
        row[position] = value
    elif how == "drop":
        del row[position]
    elif how == "add":
        row.append(value)
    elif how == "whole":
        row = _subclassed(row) if position % 2 else [_subclassed(v) for v in row]
    elif isinstance(row[position], list):
        _nested(row, position, how, value)
    else:
        row[position] = _subclassed(row[position])
    return row


BLOCKS = st.lists(st.tuples(ROWS, st.none() | MUTATIONS), min_size=1, max_size=5).map(
    lambda drawn: [row if mutation is None else _mutated(row, mutation) for row, mutation in drawn])


def _per_row(rows) -> bool:
    return all(row_acceptable(row, METRICS) is not None for row in rows)


@settings(max_examples=500, deadline=None)
@given(BLOCKS)
def test_a_block_is_accepted_exactly_when_every_row_is(rows):
    assert (checked_block(rows, METRICS) is not None) == _per_row(rows)


@settings(max_examples=150, deadline=None)
@given(st.lists(ROWS, min_size=1, max_size=6))
def test_valid_rows_are_accepted_and_cut_by_field(rows):
    if not _per_row(rows):  # a sum past the largest float
        assert checked_block(rows, METRICS) is None
        return
    block = checked_block(rows, METRICS)
    assert len(block) == len(rows)
    assert block.field("id") == tuple(row[FIELD["id"]] for row in rows)
    assert block.gold_ids == [cid for row in rows for cid, _ in row[FIELD["gold"]]]
    assert block.gold_grades == [grade for row in rows for _, grade in row[FIELD["gold"]]]
    assert [list(r) for r in block.rankings] == [[cid for cid, _ in row[FIELD["ranking"]]] for row in rows]


def test_a_number_overflowed_or_too_large_sends_the_block_row_by_row():
    row = ["q", "", [], False, "ok", [], [], [], None, None, None, None, None, None, [], [["a", 1e308], ["b", 1e308]]]
    assert checked_block([row], 0) is None and row_acceptable(row, 0) is None  # the sum overflows
    row[FIELD["ranking"]] = [["a", 10 ** 400], ["b", 0.5]]  # an integer past the largest float
    assert checked_block([row], 0) is None and row_acceptable(row, 0) is None
    row[FIELD["ranking"]] = [["a", 10 ** 400], ["b", 1]]  # integers only: the sum stays an int
    assert checked_block([row], 0) is None and row_acceptable(row, 0) is None
    row[FIELD["ranking"]] = [["a", 1e300], ["b", -1e300]]  # large, but each row's sum is finite
    assert checked_block([row, row], 0) is not None


def test_a_repeated_chunk_id_or_a_metric_out_of_range_refuses_the_block():
    good = ["q", "", [], False, "ok", [["g", 1]], [], [0.5, None, 1], 1, 0.5, 3.0, None, 0.2, None, [],
            [["g", 0.5], ["h", 0.25]]]
    assert checked_block([good], METRICS) is not None
    for position, value in (("ranking", [["g", 0.5], ["g", 0.25]]), ("gold", [["g", 1], ["g", 2]]),
                            ("metrics", [0.5, None, 1.5]), ("metrics", [0.5, 1]), ("judged_at_k", 1.5)):
        bad = list(good)
        bad[FIELD[position]] = value
        assert checked_block([good, bad], METRICS) is None and row_acceptable(bad, METRICS) is None
