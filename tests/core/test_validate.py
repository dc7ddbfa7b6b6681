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
