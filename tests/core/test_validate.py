from suite_paths import PACKAGE

from ci_eval.core.validate import json_path, schema_problems


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


# The fast checker may only ever say "valid" when jsonschema agrees; it may say "not valid"
# more readily (jsonschema then explains, or finds nothing).
import json  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ci_eval.core.validate import fast_valid  # noqa: E402
from ci_eval.schemas import load  # noqa: E402

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 2, allow_nan=False)
    | st.sampled_from(["", "q1", "ok", "stale", "a" * 70, "0123456789abcdef" * 4]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "question", "gold", "tags", "k", "status", "ranking", "score", "x"]),
        inner, max_size=4),
    max_leaves=12,
)


def _valid_by_jsonschema(doc, schema) -> bool:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema).is_valid(doc)


def _mutations(doc):
    """Documents near a valid one: each top-level and question-level value replaced."""
    yield doc
    for key in list(doc):
        for replacement in (None, "x", 3, [], {}):
            yield {**doc, key: replacement}
    if doc.get("questions"):
        q = doc["questions"][0]
        for key in list(q):
            for replacement in (None, "x", -1, [], {}, [{"id": 1}]):
                yield {**doc, "questions": [{**q, key: replacement}, *doc["questions"][1:]]}


@settings(max_examples=200, deadline=None)
@given(JSONISH, st.sampled_from(["artefact", "artefact-v2", "goldset", "config"]))
def test_fast_checker_never_accepts_what_jsonschema_rejects(doc, name):
    schema = load(name)
    if fast_valid(doc, schema):
        assert _valid_by_jsonschema(doc, schema)


def test_fast_checker_agrees_on_mutations_of_real_documents(tmp_path):
    from run_files import demo_base

    art = demo_base(tmp_path)  # as a stored baseline reads, each question an object
    gold = json.loads((PACKAGE / "demo" / "gold.json").read_text())
    checked = 0
    for name, doc in (("artefact", art), ("goldset", gold)):
        schema = load(name)
        assert fast_valid(doc, schema) is True
        for mutated in _mutations(doc):
            assert fast_valid(mutated, schema) == _valid_by_jsonschema(mutated, schema), name
            checked += 1
    assert checked > 100


def test_the_artefact_header_stays_within_what_the_fast_checker_decides():
    # A header keyword outside the fast checker turns the line-layout read of every artefact
    # into the full parse (the stage ranks' "anyOf" once did): the checker must decide it.
    from factories import artefact, as_v2, spec

    schema = load("artefact-v2")
    rows = schema["properties"]["questions"]
    shell = {**schema, "properties": {**schema["properties"],
                                      "questions": {k: v for k, v in rows.items() if k != "items"}}}
    header = {**as_v2(artefact([spec("q1", ["c1"], ["c1"])])), "questions": []}
    for ranks, valid in (([[1, 7], None], True), ([None], True), ([[0]], False), (["x"], False),
                         ([[1], {}], False)):
        doc = {**header, "stages": {"chain": [{"name": "pool"}, {"name": "rerank", "depth": 5}],
                                    "questions": {"q1": {"gold": 1, "ranks": ranks}}}}
        assert fast_valid(doc, shell) is valid
        assert _valid_by_jsonschema(doc, shell) is valid


def test_positional_items_are_checked_in_place_and_items_holds_for_the_rest():
    schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer", "minimum": 1}],
              "items": {"type": "boolean"}}
    for doc in (["a", 1], ["a", 1, True, False], ["a"], [], ["a", 0], [1, 1], ["a", 1, "x"], ["a", 1, 2]):
        assert fast_valid(doc, schema) is _valid_by_jsonschema(doc, schema), doc
    closed = {**schema, "items": False}
    for doc in (["a", 1], ["a", 1, True]):
        assert fast_valid(doc, closed) is _valid_by_jsonschema(doc, closed), doc
