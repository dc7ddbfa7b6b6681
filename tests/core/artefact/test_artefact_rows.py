"""The straight-line question-row check says what jsonschema says, on valid rows and on rows
one value away from valid."""


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ci_eval.core.artefact.artefact import validate_artefact
from ci_eval.core.artefact.artefact_rows import question_row_valid
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


def test_a_whole_artefact_with_a_bad_row_is_explained_by_jsonschema(tmp_path):
    from run_files import demo_base

    from ci_eval.errors import InputErrors

    art = demo_base(tmp_path)  # as a stored baseline reads, each question an object
    assert validate_artefact(art, "a.json") is art
    art["questions"][1]["ranking"][0]["score"] = "high"
    try:
        validate_artefact(art, "a.json")
    except InputErrors as errors:
        places = [p.place for p in errors.problems]
    else:
        raise AssertionError("a string score was accepted")
    assert places == ["questions[1].ranking[0].score"]


# --------------------------------------------------------------------------- version 2
from ci_eval.core.artefact.artefact_rows import question_row_v2_valid  # noqa: E402
from ci_eval.core.artefact.question_row import QUESTION_FIELDS, to_row  # noqa: E402

SCHEMA_V2 = load("artefact-v2")
ROW_V2 = Draft202012Validator({"$defs": SCHEMA_V2["$defs"], "$ref": "#/$defs/question"})
METRICS = ["mrr", "hit@5", "map"]
# version 1 rows with every field, as the writer has them: turned into version 2 rows
ROWS_V2 = ROWS.map(lambda q: to_row({"latency_ms": None, "answer_correct": None, "judged_at_k": None,
                                     "error": None, "warnings": [], **q}, METRICS))
VALUES_V2 = VALUES | st.lists(st.lists(st.sampled_from(["c", 1, 2.5, None, True]), max_size=3), max_size=2)


CHECKS = {1: (ROWS, ROW, question_row_valid), 2: (ROWS_V2, ROW_V2, question_row_v2_valid)}


@pytest.mark.parametrize("version", sorted(CHECKS))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_valid_rows_are_accepted(version, data):
    rows, schema, fast = CHECKS[version]
    row = data.draw(rows)
    assert schema.is_valid(row)
    assert fast(row) is True


@settings(max_examples=600, deadline=None)
@given(ROWS_V2, st.integers(0, len(QUESTION_FIELDS) - 1), VALUES_V2, st.sampled_from(["set", "drop", "add"]))
def test_a_version_2_row_one_value_away_gets_jsonschemas_verdict(row, position, value, how):
    mutated = list(row)
    if how == "drop":
        del mutated[position]
    elif how == "add":
        mutated.append(value)
    else:
        mutated[position] = value
    assert question_row_v2_valid(mutated) == ROW_V2.is_valid(mutated)


@settings(max_examples=400, deadline=None)
@given(ROWS_V2, st.sampled_from(["gold", "ranking", "metrics", "tags", "stale", "warnings"]),
       VALUES_V2, st.booleans())
def test_a_nested_version_2_value_gets_jsonschemas_verdict(row, name, value, inside_a_pair):
    mutated = list(row)
    position = QUESTION_FIELDS.index(name)
    inner = list(mutated[position])
    if inside_a_pair and name in ("gold", "ranking"):
        mutated[position] = [*inner, ["c", value]]  # a pair whose value is off
    else:
        mutated[position] = [*inner, value]
    assert question_row_v2_valid(mutated) == ROW_V2.is_valid(mutated)


def test_non_rows_are_refused_like_jsonschema_in_version_2():
    for value in (None, [], "q", 1, {}, [None] * 16, {"id": "q"}):
        assert question_row_v2_valid(value) is ROW_V2.is_valid(value) is False


EMPTY_QUESTION = {"id": "q", "question": "", "tags": [], "unanswerable": False, "gold": {}, "stale": [],
                  "status": "ok", "ranking": [], "first_gold_rank": None, "top_score": None, "metrics": {}}


@pytest.mark.parametrize("longer", [0, 1])
@pytest.mark.parametrize("name", ["gold", "stale", "ranking"])
def test_a_chunk_id_at_the_schemas_bound_and_past_it_gets_jsonschemas_verdict(name, longer):
    from ci_eval.core.limits import MAX_ID_BYTES

    cid = "\u00e9" * (MAX_ID_BYTES + longer)  # characters, as the schema counts them
    row = to_row(EMPTY_QUESTION, METRICS)
    row[QUESTION_FIELDS.index(name)] = {"gold": [[cid, 1]], "stale": [cid], "ranking": [[cid, 0.5]]}[name]
    assert question_row_v2_valid(row) is ROW_V2.is_valid(row) is (longer == 0)
    if name != "gold":  # a version 1 gold id is an object's key, which the schema does not bound
        question = {**EMPTY_QUESTION, name: [{"id": cid, "score": 0.5}] if name == "ranking" else [cid]}
        assert question_row_valid(question) is ROW.is_valid(question) is (longer == 0)
