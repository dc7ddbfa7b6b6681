from ci_eval.core.validate import json_path, schema_problems


def test_json_path_spells_indexes_and_keys():
    assert json_path(["gate", "min", "hit@5"]) == "gate.min.hit@5"
    assert json_path(["questions", 3, "gold"]) == "questions[3].gold"
    assert json_path([]) == "(top level)"


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
