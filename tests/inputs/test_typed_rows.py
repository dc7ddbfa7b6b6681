"""A piece of version 2 rows decoded by msgspec into the schema's types, then held to what no
type can say, says what the per-row path says of its rows (the schema's row check, the meaning
checks, no number overflowed), with the two differences inputs/typed_rows.py names; and on
each hostile input a file can hold, the reader's verdict is the full parse's."""

from __future__ import annotations

import json
import math

import msgspec
import pytest
from factories import artefact, as_v2, spec
from hypothesis import given, settings
from hypothesis import strategies as st
from v2_files import assert_same_columns
from v2_rows import METRICS, NUMBERS, ROWS, body_of

from ci_eval.core.artefact.artefact import read_artefact
from ci_eval.core.artefact.artefact_checks import METRIC_RANGE, row_means
from ci_eval.core.artefact.artefact_rows import question_row_v2_valid
from ci_eval.core.artefact.artefact_writer import END_KEYS, artefact_pieces
from ci_eval.core.artefact.question_row import FIELD, QUESTION_FIELDS
from ci_eval.core.artefact.row_blocks import row_finite
from ci_eval.core.limits import MAX_ID_BYTES
from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs import artefact_file
from ci_eval.inputs.files import decode, parse_json, reject_constant
from ci_eval.inputs.loaders import _checked_artefact
from ci_eval.inputs.typed_rows import ROW_TYPES, decoded_block
from ci_eval.schemas import load


# --------------------------------------------------------------------------- the types
def _canonical(node: dict) -> dict:
    """A JSON Schema node's types and bounds in one form: msgspec writes an optional value as
    anyOf [value, null], a string's minLength as 0 and a pair's length as min and maxItems;
    the shipped schema a list of types and ``items: false``."""
    if "anyOf" in node:
        merged: dict = {"type": set()}
        for branch in map(_canonical, node["anyOf"]):
            types = branch.pop("type")
            merged.update(branch)
            merged["type"] |= types
        return merged
    kind = node.get("type", [])
    out: dict = {"type": {kind} if isinstance(kind, str) else set(kind)}
    for key in ("enum", "minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum"):
        if key in node and not (key == "minLength" and node[key] == 0):
            out[key] = set(node[key]) if key == "enum" else node[key]
    if "prefixItems" in node:
        out["prefixItems"] = [_canonical(item) for item in node["prefixItems"]]
        if node.get("items") is False:
            out["maxItems"] = len(node["prefixItems"])
    elif isinstance(node.get("items"), dict):
        out["items"] = _canonical(node["items"])
    return out


def test_the_row_types_are_the_schemas_question_row_bound_for_bound():
    row = load("artefact-v2")["$defs"]["question"]
    assert tuple(ROW_TYPES) == QUESTION_FIELDS
    assert row["minItems"] == len(row["prefixItems"]) == len(QUESTION_FIELDS) and row["items"] is False
    for name, node in zip(QUESTION_FIELDS, row["prefixItems"]):
        expected = _canonical(node)
        if name == "metrics":  # the meaning check's range, which the schema leaves to check_row
            expected["items"].update(minimum=METRIC_RANGE[0], maximum=METRIC_RANGE[1])
        assert _canonical(msgspec.json.schema(ROW_TYPES[name])) == expected, name


# --------------------------------------------------------------------------- the verdict
def json_rows(body: bytes) -> list | None:
    """The rows as json gives them to the per-row path, or None when json refuses the text."""
    try:
        return json.loads("[" + body.decode("utf-8") + "]", parse_constant=reject_constant)
    except (ValueError, RecursionError):  # UTF-8, JSON, NaN or Infinity, an integer too long
        return None


def _numbers(row: list):
    yield from (score for _, score in row[FIELD["ranking"]])
    yield from (v for v in row[FIELD["metrics"]] if v is not None)
    yield from (row[FIELD[name]] for name in ("top_score", "latency_ms", "judged_at_k") if row[FIELD[name]] is not None)


def _each_finite(row: list) -> bool:
    try:
        return all(math.isfinite(float(x)) for x in _numbers(row))
    except OverflowError:  # an integer past the largest float
        return False


def _whole_float_for_an_integer(row: list) -> bool:
    rank = row[FIELD["first_gold_rank"]]
    return type(rank) is float or any(type(grade) is float for _, grade in row[FIELD["gold"]])


def per_row(row) -> bool:
    """The per-row verdict (question_row_v2_valid, row_means, row_finite) with typed_rows'
    two differences: a whole float where an integer is asked steps aside to the full parse,
    and numbers each finite whose sum overflows are accepted, as the full parse accepts them."""
    if not question_row_v2_valid(row) or _whole_float_for_an_integer(row):
        return False
    ids = [cid for cid, _ in row[FIELD["gold"]]], [cid for cid, _ in row[FIELD["ranking"]]]
    return row_means(row[FIELD["metrics"]], *ids, METRICS) and (row_finite(row) or _each_finite(row))


WRONG = (st.none() | st.booleans() | NUMBERS
         | st.sampled_from([float("nan"), float("inf"), -float("inf"), 2.0, -0.0, 2 ** 64, -(2 ** 63) - 1, 10 ** 30,
                            1.5, -1, 1001, "", "x", "ok", "a" * 201, "\U0001f600" * 200, "\U0001f600" * 201,
                            "b" * 1001, "c" * MAX_ID_BYTES, "c" * (MAX_ID_BYTES + 1), "\ud800", "t" * 101])
         | st.lists(st.sampled_from(["t", 1, None, True, 0.5, 7, 2.0]), max_size=4)
         | st.lists(st.lists(st.sampled_from(["c", 1, 2.5, 2.0, None, True]), max_size=3), max_size=2)
         | st.just({"id": "c"}))


def _nested(row: list, position: int, how: str, value) -> None:
    """One thing wrong inside a list field: a value appended, an id repeated, a pair off."""
    inner = row[position]
    if how == "append":
        row[position] = [*inner, value]
    elif how == "repeat" and inner:
        row[position] = [*inner, list(inner[0]) if isinstance(inner[0], list) else inner[0]]
    elif how == "pair":
        row[position] = [*inner, ["c", value]]


def _mutated(row: list, mutation) -> list:
    position, how, value = mutation
    row = list(row)
    if how == "set":
        row[position] = value
    elif how == "drop":
        del row[position]
    elif how == "add":
        row.append(value)
    elif isinstance(row[position], list):
        _nested(row, position, how, value)
    return row


MUTATIONS = st.tuples(st.integers(0, len(QUESTION_FIELDS) - 1),
                      st.sampled_from(["set", "drop", "add", "append", "repeat", "pair"]), WRONG)
BLOCKS = st.lists(st.tuples(ROWS, st.none() | MUTATIONS), min_size=1, max_size=5).map(
    lambda drawn: [row if mutation is None else _mutated(row, mutation) for row, mutation in drawn])


@settings(max_examples=400, deadline=None)
@given(BLOCKS)
def test_a_piece_is_decoded_exactly_when_every_row_is_accepted_one_by_one(rows):
    body = body_of(rows)
    parsed = json_rows(body)
    assert (decoded_block(body, METRICS) is not None) == (parsed is not None and all(map(per_row, parsed)))


def _as_read(value):
    """A number as the reader holds it: an integer written where a number is asked is that float."""
    return float(value) if type(value) is int else value


@settings(max_examples=150, deadline=None)
@given(st.lists(ROWS, min_size=1, max_size=6))
def test_valid_rows_are_decoded_to_jsons_values_and_cut_by_field(rows):
    body = body_of(rows)
    parsed = json_rows(body)
    block = decoded_block(body, METRICS)
    if not all(map(per_row, parsed)):  # a whole float for an integer, a number past a float
        assert block is None
        return
    assert len(block) == len(rows)
    for name in ("id", "question", "unanswerable", "status", "answer_correct", "error"):
        assert block.field(name) == tuple(row[FIELD[name]] for row in parsed), name
    for name in ("top_score", "latency_ms", "judged_at_k"):  # the same floats, bit for bit
        assert list(map(repr, block.field(name))) == [repr(_as_read(row[FIELD[name]])) for row in parsed], name
    assert [list(map(repr, v)) for v in block.field("metrics")] == [
        [repr(_as_read(v)) for v in row[FIELD["metrics"]]] for row in parsed]
    assert block.gold_ids == [cid for row in parsed for cid, _ in row[FIELD["gold"]]]
    assert block.gold_grades == [grade for row in parsed for _, grade in row[FIELD["gold"]]]
    assert block.field("first_gold_rank") == tuple(row[FIELD["first_gold_rank"]] for row in parsed)
    assert [list(r) for r in block.rankings] == [[cid for cid, _ in row[FIELD["ranking"]]] for row in parsed]
    assert [list(map(repr, r.values())) for r in block.rankings] == [
        [repr(_as_read(score)) for _, score in row[FIELD["ranking"]]] for row in parsed]


def test_a_repeated_chunk_id_or_a_metric_count_off_refuses_the_piece():
    good = ["q", "", [], False, "ok", [["g", 1]], [], [0.5, None, 1], 1, 0.5, 3.0, None, 0.2, None, [],
            [["g", 0.5], ["h", 0.25]]]
    assert decoded_block(body_of([good]), METRICS) is not None
    for position, value in (("ranking", [["g", 0.5], ["g", 0.25]]), ("gold", [["g", 1], ["g", 2]]),
                            ("metrics", [0.5, None, 1.5]), ("metrics", [0.5, 1]), ("judged_at_k", 1.5)):
        bad = list(good)
        bad[FIELD[position]] = value
        assert decoded_block(body_of([good, bad]), METRICS) is None and not per_row(bad), position


def test_numbers_each_finite_whose_sum_overflows_are_decoded():
    row = ["q", "", [], False, "ok", [], [], [], None, None, None, None, None, None, [], [["a", 1e308], ["b", 1e308]]]
    assert not row_finite(row) and decoded_block(body_of([row]), 0) is not None
    row[FIELD["ranking"]] = [["a", 10 ** 400], ["b", 0.5]]  # an integer past the largest float
    assert decoded_block(body_of([row]), 0) is None


# --------------------------------------------------------------------------- hostile files
SPECS = [spec("q1", {"a": 2, "b": 1}, ["b", "x", "a"], tags=["faq"]), spec("q2", ["g"], ["x0", "x1", "g"]),
         spec("q3", ["g"], error="timeout after 30 s"), spec("u1", unanswerable=True, ranking=["z"])]


def written() -> bytes:
    """The artefact of SPECS as the writer writes it."""
    data = as_v2(artefact(SPECS))
    head = {k: v for k, v in data.items() if k not in END_KEYS | {"questions", "question_fields"}}
    end = {k: v for k, v in data.items() if k in END_KEYS}
    return "".join(artefact_pieces(head, data["questions"], lambda: end)).encode("utf-8")


# docs/artefact.md's list of what the decoder must refuse as the full parse does, and what it must read
# as the full parse reads it: (what q1's row holds instead, whether the fast path takes the file)
HOSTILE = {
    "a wrong type": ((b'"What about q1?"', b"17"), False),
    "a question id past its length": ((b'["q1",', b'["' + b"q" * 201 + b'",'), False),
    "a chunk id past the schema's bound": ((b'["x",', b'["' + b"x" * (MAX_ID_BYTES + 1) + b'",'), False),
    "a chunk id at the schema's bound": ((b'["x",', b'["' + b"x" * MAX_ID_BYTES + b'",'), True),
    "a metric value out of range": ((b'[1,1,0.4,', b'[1.5,1,0.4,'), False),
    "a negative latency": ((b',10,2.0,', b',10,-2.0,'), False),
    "a grade out of bounds": ((b'[["a",2],', b'[["a",1001],'), False),
    "NaN": ((b'[1,1,0.4,', b'[NaN,1,0.4,'), False),
    "Infinity": ((b'["x",9.75]', b'["x",Infinity]'), False),
    "a score overflowing a float": ((b',10,2.0,', b',1e999,2.0,'), False),
    "an integer too long to convert": ((b',1,10,2.0,', b',' + b"9" * 5000 + b',10,2.0,'), False),
    "a lone surrogate": ((b'"What about q1?"', b'"What \\ud800 q1?"'), False),
    "invalid UTF-8": ((b'"What about q1?"', b'"What \xff q1?"'), False),
    "a grade written as 2.0": ((b'[["a",2],', b'[["a",2.0],'), False),
    "a huge integer rank": ((b',1,10,2.0,', b',' + b"9" * 40 + b',10,2.0,'), True),
    "a chunk id named twice": ((b'[["a",2],["b",1]]', b'[["a",2],["a",1]]'), False),
}


def full_parse(raw: bytes):
    return read_artefact(_checked_artefact(parse_json(decode(raw, "a.json"), "a.json"), "a.json"))


def verdict(read, raw: bytes):
    """What ``read`` makes of ``raw``: the artefact, or the words of its refusal."""
    try:
        return read(raw)
    except InputErrors as exc:
        return [str(p) for p in exc.problems]
    except InputError as exc:
        return [str(exc)]


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_row_gets_the_full_parses_verdict(case):
    (old, new), fast = HOSTILE[case]
    raw = written()
    changed = raw.replace(old, new, 1)
    assert changed != raw, "the mutation did not apply"
    expected = verdict(full_parse, changed)
    got = verdict(lambda b: artefact_file.run_from_bytes(b, "a.json"), changed)
    if isinstance(expected, list):
        assert got == expected
    else:
        assert_same_columns(got, expected)
    assert (artefact_file._by_lines(changed, "a.json", 0) is not None) is fast
