import json

from suite_paths import PACKAGE

from ci_eval.core.gold.goldformat import dumps_gold_set

DEMO_GOLD = PACKAGE / "demo" / "gold.json"


def test_the_demo_gold_set_round_trips_byte_for_byte():
    raw = DEMO_GOLD.read_text(encoding="utf-8")
    assert dumps_gold_set(json.loads(raw)) == raw


def test_one_question_per_line_and_provenance_records_one_per_line():
    doc = {
        "questions": [{"gold": {"c": 1}, "question": "Q?", "id": "q1"}],
        "schema_version": 1,
        "provenance": {"built_by": "Ann", "judgements": {"q1": {"by": "Ann", "at": "t"}}},
    }
    text = dumps_gold_set(doc)
    assert json.loads(text) == doc
    lines = text.splitlines()
    assert lines[1] == '  "schema_version": 1,'
    assert '    {"id": "q1", "question": "Q?", "gold": {"c": 1}}' in lines
    assert '      "q1": {"by": "Ann", "at": "t"}' in lines


def test_changing_one_grade_changes_one_line():
    doc = {"schema_version": 1, "questions": [
        {"id": "q1", "question": "a?", "gold": {"x": 1}},
        {"id": "q2", "question": "b?", "gold": {"y": 1}},
    ]}
    before = dumps_gold_set(doc).splitlines()
    doc["questions"][1]["gold"]["z"] = 0
    after = dumps_gold_set(doc).splitlines()
    assert len(before) == len(after)
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [before.index(
        '    {"id": "q2", "question": "b?", "gold": {"y": 1}}')]
