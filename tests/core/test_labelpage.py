import pytest

from ci_eval.core.candidates import review
from ci_eval.core.labelpage import NO_TEXT, page_state, parse_request
from ci_eval.errors import InputError


def test_state_counts_marks_and_leaves_out_removed_questions():
    doc = {"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": {"x": 2}}],
           "provenance": {"judgements": {"q1": {"chunks": {"y": {"grade": None}}}}}}
    state = page_state(doc, {"q1": ("x", "y", "z"), "gone": ("w",)}, {"x": "ex"}, review([], doc), "Ann")
    assert [q["id"] for q in state["questions"]] == ["q1"]
    assert state["questions"][0]["candidates"] == [
        {"id": "x", "text": "ex", "mark": 2}, {"id": "y", "text": NO_TEXT, "mark": "?"},
        {"id": "z", "text": NO_TEXT, "mark": None}]
    assert state["progress"] == {"judged": 2, "to_judge": 1}


@pytest.mark.parametrize(("kind", "body", "message"), [
    ("grade", {"question": "q1", "chunk": "x", "grade": True}, "integer from 0 to 3"),
    ("grade", {"question": "", "chunk": "x", "grade": 1}, "non-empty"),
    ("grade", {"question": "q1", "chunk": "x", "grade": 1, "note": "n" * 2001}, "longer than 2000"),
    ("unanswerable", {"question": "q1", "value": "yes"}, "true or false"),
    ("edit", {"question": "q1"}, "non-empty"),
    ("delete", {}, "unknown request"),
    ("keep", ["c-1"], "JSON object"),
])
def test_requests_are_validated_field_by_field(kind, body, message):
    with pytest.raises(InputError, match=message):
        parse_request(kind, body)


def test_a_valid_grade_request():
    assert parse_request("grade", {"question": "q1", "chunk": "x", "grade": None, "seen": "?", "note": "hm"}) == {
        "question": "q1", "chunk": "x", "grade": None, "seen": "?", "note": "hm"}
