import json

import tomllib
from hypothesis import given, settings
from hypothesis import strategies as st
from suite_paths import PACKAGE, REPO_ROOT

from ci_eval.core.validate import fast_valid, json_path, schema_problems, schema_valid
from ci_eval.schemas import load


def test_json_path_spells_indexes_and_keys():
    assert json_path(["gate", "min", "hit@5"]) == "gate.min.hit@5"
    assert json_path(["questions", 3, "gold"]) == "questions[3].gold"
    assert json_path([]) == "(top level)"


def test_a_key_holding_a_newline_or_nothing_is_quoted_so_the_place_stays_one_line():
    assert json_path(["questions", 0, "gold", "\n"]) == 'questions[0].gold["\\u000a"]'
    assert json_path(["gold", ""]) == 'gold[""]'
    from ci_eval.core.gold.goldset import parse_gold_set
    from ci_eval.errors import InputError

    bad = {"schema_version": 1, "index_version": "v",
           "questions": [{"id": "q", "question": "x", "gold": {"\n": "x"}}]}
    try:
        parse_gold_set(bad, "gold.json")
    except InputError as exc:
        assert "\n" not in str(exc) and '["\\u000a"]' in str(exc)
    else:
        raise AssertionError("a grade that is not a number was accepted")


def test_all_problems_sorted_by_place():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"enum": ["x", "y"]}},
        "additionalProperties": False,
    }
    problems = schema_problems({"b": "z", "a": "one", "c": 1}, schema, "f.toml")
    assert [p.place for p in problems] == ["(top level)", "a", "b"]
    assert "unknown key 'c'" in problems[0].message
    assert problems[1].message == 'expected a whole number, got "one"'
    assert problems[2].message == 'expected one of "x", "y", got "z"'


def test_the_artefact_headers_stage_ranks_are_decided_by_the_shell_check():
    # The line-layout read checks the header by the schema without its rows: the stage
    # ranks (an "anyOf") must be accepted there or refused, never left to the full parse.
    from factories import artefact, as_v2, spec

    from ci_eval.core.validate import schema_valid
    from ci_eval.schemas import load

    schema = load("artefact-v2")
    rows = schema["properties"]["questions"]
    shell = {**schema, "properties": {**schema["properties"],
                                      "questions": {k: v for k, v in rows.items() if k != "items"}}}
    header = {**as_v2(artefact([spec("q1", ["c1"], ["c1"])])), "questions": []}
    for ranks, valid in (([[1, 7], None], True), ([None], True), ([[0]], False), (["x"], False),
                         ([[1], {}], False)):
        doc = {**header, "stages": {"chain": [{"name": "pool"}, {"name": "rerank", "depth": 5}],
                                    "questions": {"q1": {"gold": 1, "ranks": ranks}}}}
        assert schema_valid(doc, shell) is valid


# The small checker may only ever say "valid" when jsonschema agrees; it may say "not valid"
# more readily (jsonschema then explains, or finds nothing).

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 2, allow_nan=False)
    | st.sampled_from(["", "q1", "ok", "stale", "a" * 70, "0123456789abcdef" * 4, "command", "python"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "question", "gold", "tags", "k", "status", "ranking", "score", "x",
                         "gold_set", "retriever", "type", "target", "gate", "min", "metrics"]),
        inner, max_size=4),
    max_leaves=12,
)


_JSONSCHEMA: dict[int, tuple] = {}


def _valid_by_jsonschema(doc, schema) -> bool:
    from jsonschema import Draft202012Validator

    held = _JSONSCHEMA.get(id(schema))
    if held is None:  # built once a schema, the schema kept so its id is not reused
        held = _JSONSCHEMA[id(schema)] = (schema, Draft202012Validator(schema))
    return held[1].is_valid(doc)


def _mutations(doc):
    """Documents near a valid one: each value at the top, one level down and in the first
    question replaced."""
    yield doc
    for key in list(doc):
        for replacement in (None, "x", 3, -1, 0.5, [], {}):
            yield {**doc, key: replacement}
        if isinstance(doc[key], dict):
            for inner in list(doc[key]):
                for replacement in (None, "x", 3, -1, [], {}, True):
                    yield {**doc, key: {**doc[key], inner: replacement}}
    if doc.get("questions"):
        q = doc["questions"][0]
        for key in list(q):
            for replacement in (None, "x", -1, [], {}, [{"id": 1}]):
                yield {**doc, "questions": [{**q, key: replacement}, *doc["questions"][1:]]}


@settings(max_examples=200, deadline=None)
@given(JSONISH, st.sampled_from(["artefact", "artefact-v2", "goldset", "config"]))
def test_the_small_checker_never_accepts_what_jsonschema_rejects(doc, name):
    schema = load(name)
    if fast_valid(doc, schema):
        assert _valid_by_jsonschema(doc, schema)


def _configs() -> list[dict]:
    """Every config the repository holds: the examples', the bad-input corpus's (the broken
    ones among them), ours."""
    paths = [*REPO_ROOT.glob("examples/**/ci-eval*.toml"), *REPO_ROOT.glob("tests/bad_inputs/**/ci-eval.toml"),
             REPO_ROOT / "ci-eval.toml"]
    configs = []
    for path in paths:
        try:
            configs.append(tomllib.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, RecursionError):  # TOMLDecodeError and UnicodeDecodeError among them
            continue  # a corpus case of a config that is not TOML at all
    return configs


def test_the_small_checker_agrees_on_mutations_of_real_documents(tmp_path):
    from run_files import demo_base

    # as a stored baseline reads, each question an object; three questions of each document
    # hold every shape a mutation reaches, and jsonschema walks each mutated document whole
    art = demo_base(tmp_path)
    art = {**art, "questions": art["questions"][:3]}
    gold = json.loads((PACKAGE / "demo" / "gold.json").read_text())
    gold = {**gold, "questions": gold["questions"][:3]}
    configs = _configs()
    assert len(configs) > 5
    checked = 0
    for name, doc in (("artefact", art), ("goldset", gold), *(("config", c) for c in configs)):
        schema = load(name)
        assert fast_valid(doc, schema) == _valid_by_jsonschema(doc, schema), (name, doc)
        for mutated in _mutations(doc):
            assert fast_valid(mutated, schema) == _valid_by_jsonschema(mutated, schema), (name, mutated)
            checked += 1
    assert checked > 500


def test_positional_items_are_checked_in_place_and_items_holds_for_the_rest():
    schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer", "minimum": 1}],
              "items": {"type": "boolean"}}
    for doc in (["a", 1], ["a", 1, True, False], ["a"], [], ["a", 0], [1, 1], ["a", 1, "x"], ["a", 1, 2]):
        assert fast_valid(doc, schema) is _valid_by_jsonschema(doc, schema), doc
    closed = {**schema, "items": False}
    for doc in (["a", 1], ["a", 1, True]):
        assert fast_valid(doc, closed) is _valid_by_jsonschema(doc, closed), doc


def test_a_schema_with_a_keyword_it_cannot_read_is_left_to_jsonschema():
    schema = {"type": "object", "dependentRequired": {"end": ["start"]}}
    assert fast_valid({"end": 1}, schema) is None
    assert not schema_valid({"end": 1}, schema) and schema_valid({"end": 1, "start": 0}, schema)
