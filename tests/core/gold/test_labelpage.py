import pytest

from ci_eval.core.gold.candidates import review
from ci_eval.core.gold.labelpage import NO_TEXT, page_state, parse_request
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


def test_a_delta_carries_the_changed_question_without_texts_and_names_what_is_gone():
    from ci_eval.core.gold.labelpage import delta

    doc = {"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": {"x": 2, "old": 0}},
                                              {"id": "q2", "question": "b?", "gold": ["w"]}]}
    pools = {"q1": ("x", "y"), "q2": ("v",)}
    out = delta(doc, pools, ["q1", "gone"])
    assert out == {"questions": [{"id": "q1", "question": "a?", "pending": False, "unanswerable": False,
                                  "earlier": 1, "candidates": [{"id": "x", "mark": 2}, {"id": "y", "mark": None}]}],
                   "removed": ["gone"]}
    # The same entry as the whole state's, less the texts: the page merges one into the other.
    whole = page_state(doc, pools, {"x": "ex"}, [], "Ann")["questions"][0]
    assert [{k: v for k, v in c.items() if k != "text"} for c in whole["candidates"]] == out["questions"][0]["candidates"]
    assert whole["earlier"] == 1
    with_texts = delta(doc, pools, ["q2"], texts={"v": "vee"})
    assert with_texts["questions"][0]["candidates"] == [{"id": "v", "text": "vee", "mark": None}]
