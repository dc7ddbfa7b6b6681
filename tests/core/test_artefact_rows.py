"""The straight-line question-row check says what jsonschema says, on valid rows and on rows
one value away from valid."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ci_eval.core.artefact import validate_artefact
from ci_eval.core.artefact_rows import question_row_valid
from ci_eval.schemas import load

SCHEMA = load("artefact")
ROW = Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/question"})

NUMBERS = st.integers(-3, 3) | st.floats(allow_nan=False) | st.sampled_from([1.0, 0.0, 2.5])
VALUES = (st.none() | st.booleans() | NUMBERS | st.sampled_from(["", "x", "ok", "a" * 201])
          | st.lists(st.sampled_from(["t", 1, None]), max_size=2)
          | st.dictionaries(st.sampled_from(["c1", "id", "score"]), NUMBERS | st.none() | st.text(max_size=2),
                            max_size=2))

ROWS = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=8),
        "question": st.text(max_size=8),
        "tags": st.lists(st.text(max_size=4), max_size=3),
        "unanswerable": st.booleans(),
        "gold": st.dictionaries(st.text(max_size=3), st.integers(-1000, 1000) | st.just(2.0), max_size=3),
        "stale": st.lists(st.text(max_size=3), max_size=2),
        "status": st.sampled_from(["ok", "stale", "unanswerable", "error"]),
        "ranking": st.lists(st.fixed_dictionaries({"id": st.text(max_size=3), "score": NUMBERS}), max_size=4),
        "first_gold_rank": st.none() | st.integers(1, 20) | st.just(3.0),
        "top_score": st.none() | NUMBERS,
        "metrics": st.dictionaries(st.sampled_from(["mrr", "hit@5", "map"]), NUMBERS, max_size=3),
    },
    optional={
        "error": st.none() | st.text(max_size=4),
        "warnings": st.lists(st.text(max_size=4), max_size=2),
        "latency_ms": st.none() | st.floats(0, 100),
        "answer_correct": st.none() | st.booleans(),
        "judged_at_k": st.none() | st.floats(0, 1),
    },
)

KEYS = ["id", "question", "tags", "unanswerable", "gold", "stale", "status", "ranking",
        "first_gold_rank", "top_score", "metrics", "error", "warnings", "latency_ms",
        "answer_correct", "judged_at_k"]


@settings(max_examples=300, deadline=None)
@given(ROWS)
def test_valid_rows_are_accepted(row):
    assert ROW.is_valid(row)
    assert question_row_valid(row) is True


@settings(max_examples=600, deadline=None)
@given(ROWS, st.sampled_from(KEYS), VALUES, st.booleans())
def test_a_row_one_value_away_gets_jsonschemas_verdict(row, key, value, drop):
    mutated = dict(row)
    if drop:
        mutated.pop(key, None)
    else:
        mutated[key] = value
    assert question_row_valid(mutated) == ROW.is_valid(mutated)


@settings(max_examples=300, deadline=None)
@given(ROWS, st.sampled_from(["ranking", "gold", "metrics", "tags"]), VALUES)
def test_a_nested_value_gets_jsonschemas_verdict(row, key, value):
    mutated = dict(row)
    inner = row[key]
    if isinstance(inner, list):
        mutated[key] = [*inner, value]
    elif "ranking" == key:
        mutated[key] = [{"id": "c", "score": value}]
    else:
        mutated[key] = {**inner, "k": value}
    assert question_row_valid(mutated) == ROW.is_valid(mutated)


def test_non_rows_are_refused_like_jsonschema():
    for value in (None, [], "q", 1, {}):
        assert question_row_valid(value) is ROW.is_valid(value) is False


def test_a_whole_artefact_with_a_bad_row_is_explained_by_jsonschema():
    from ci_eval.demo.run import builtin_base
    from ci_eval.errors import InputErrors

    art = json.loads(json.dumps(builtin_base()))  # as a stored baseline reads
    assert validate_artefact(art, "a.json") is art
    art["questions"][1]["ranking"][0]["score"] = "high"
    try:
        validate_artefact(art, "a.json")
    except InputErrors as errors:
        places = [p.place for p in errors.problems]
    else:
        raise AssertionError("a string score was accepted")
    assert places == ["questions[1].ranking[0].score"]
