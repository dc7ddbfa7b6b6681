"""A version 2 row and its version 1 object hold the same facts, and each shape is what its
schema describes."""

import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ci_eval.core.artefact.question_row import FIELD, QUESTION_FIELDS, from_row, read_value, to_row, written_value
from ci_eval.schemas import load

V1 = load("artefact")
V2 = load("artefact-v2")
V1_QUESTION = Draft202012Validator({"$defs": V1["$defs"], "$ref": "#/$defs/question"})
V2_QUESTION = Draft202012Validator({"$defs": V2["$defs"], "$ref": "#/$defs/question"})
METRICS = ["hit@5", "mrr", "ndcg@5"]

SCORES = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-5, 5)
TEXT = st.text(max_size=6)
QUESTIONS = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=8),
        "question": TEXT,
        "tags": st.lists(TEXT, max_size=3),
        "unanswerable": st.booleans(),
        "gold": st.dictionaries(TEXT, st.integers(-1000, 1000), max_size=4),
        "stale": st.lists(TEXT, max_size=2),
        "status": st.sampled_from(["ok", "stale", "unanswerable", "error"]),
        "ranking": st.lists(st.fixed_dictionaries({"id": TEXT, "score": SCORES}), max_size=5),
        "first_gold_rank": st.none() | st.integers(1, 20),
        "top_score": st.none() | SCORES,
        "metrics": st.just({}) | st.fixed_dictionaries({m: st.floats(0, 1) for m in METRICS}),
        "latency_ms": st.none() | st.floats(0, 1000),
        "answer_correct": st.none() | st.booleans(),
        "judged_at_k": st.none() | st.floats(0, 1),
        "error": st.none() | TEXT,
        "warnings": st.lists(TEXT, max_size=2),
    }
)


@settings(max_examples=300, deadline=None)
@given(QUESTIONS)
def test_a_row_gives_back_the_object_it_was_made_from(question):
    row = to_row(question, METRICS)
    assert len(row) == len(QUESTION_FIELDS)
    assert V1_QUESTION.is_valid(question)
    assert V2_QUESTION.is_valid(row), list(V2_QUESTION.iter_errors(row))
    assert from_row(row, METRICS) == question
    # and through JSON text, as it travels
    assert from_row(json.loads(json.dumps(row)), METRICS) == json.loads(json.dumps(question))


def test_the_optional_fields_of_version_1_read_as_their_defaults():
    question = {"id": "q", "question": "", "tags": [], "unanswerable": False, "gold": {"b": 1, "a": 2},
                "stale": [], "status": "ok", "ranking": [{"id": "a", "score": 1.5}],
                "first_gold_rank": 1, "top_score": 1.5, "metrics": {"mrr": 1.0}}
    row = to_row(question, ["mrr", "map"])
    assert row[FIELD["gold"]] == [["a", 2], ["b", 1]]  # ids ascending
    assert row[FIELD["metrics"]] == [1.0, None]  # map was not recorded
    assert row[FIELD["ranking"]] == [["a", 1.5]]
    assert [row[FIELD[f]] for f in ("latency_ms", "answer_correct", "judged_at_k", "error")] == [None] * 4
    assert row[FIELD["warnings"]] == []
    back = from_row(row, ["mrr", "map"])
    assert back["metrics"] == {"mrr": 1.0}
    assert back == {**question, "latency_ms": None, "answer_correct": None, "judged_at_k": None,
                    "error": None, "warnings": []}


def test_the_v2_schema_names_the_row_layout_this_module_writes():
    assert V2["properties"]["question_fields"]["const"] == list(QUESTION_FIELDS)
    assert len(V2["$defs"]["question"]["prefixItems"]) == len(QUESTION_FIELDS)
    assert V2["properties"]["schema_version"] == {"const": 2}


def test_the_v2_schema_refuses_an_object_row_and_a_short_row():
    question = {"id": "q", "question": "", "tags": [], "unanswerable": False, "gold": {}, "stale": [],
                "status": "ok", "ranking": [], "first_gold_rank": None, "top_score": None, "metrics": {}}
    assert not V2_QUESTION.is_valid(question)
    assert not V2_QUESTION.is_valid(to_row(question, METRICS)[:-1])
    assert not V2_QUESTION.is_valid(to_row(question, METRICS) + [None])
    bad_pair = to_row(question, METRICS)
    bad_pair[FIELD["ranking"]] = [["a", 1.0, "extra"]]
    assert not V2_QUESTION.is_valid(bad_pair)


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, -0.0, 1.0, 2.0 ** 53, -(2.0 ** 52)]))
def test_a_metric_value_written_compactly_reads_back_as_the_same_float(value):
    written = json.dumps(written_value(value))
    back = read_value(json.loads(written))
    assert type(back) is float and repr(back) == repr(value)  # -0.0 keeps its sign
    assert len(written) <= len(repr(value))
    if value.is_integer() and abs(value) < 2.0 ** 53 and math.copysign(1.0, value) > 0:
        assert written == str(int(value))  # 0 and 1, not 0.0 and 1.0


def test_a_run_writes_whole_values_as_integers_and_reads_them_as_floats():
    from ci_eval.core.artefact.evaluation import _written

    values = np.array([0.0, 1.0, 0.5, -0.0, 1 / 3, 2.0 ** 53, 7.0])
    written = _written(values)
    assert written == [written_value(v) for v in values.tolist()]
    assert [type(v) for v in written] == [type(written_value(v)) for v in values.tolist()]
    assert json.dumps(written) == "[0, 1, 0.5, -0.0, 0.3333333333333333, 9007199254740992.0, 7]"
    row = to_row({**_question(), "metrics": dict(zip(METRICS, [1.0, 0.0, 0.25]))}, METRICS)
    assert row[FIELD["metrics"]] == [1, 0, 0.25] and type(row[FIELD["metrics"]][0]) is int
    read = from_row(json.loads(json.dumps(row)), METRICS)["metrics"]
    assert read == {"hit@5": 1.0, "mrr": 0.0, "ndcg@5": 0.25} and {type(v) for v in read.values()} == {float}


def _question() -> dict:
    return {"id": "q1", "question": "q?", "tags": [], "unanswerable": False, "gold": {"a": 1}, "stale": [],
            "status": "ok", "ranking": [{"id": "a", "score": 1.0}], "first_gold_rank": 1, "top_score": 1.0,
            "metrics": {}, "latency_ms": None, "answer_correct": None, "judged_at_k": None, "error": None,
            "warnings": []}
