import pytest

from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.core.gold.judgement import (
    UNSURE,
    Conflict,
    Stamp,
    apply_edit,
    apply_grade,
    apply_unanswerable,
    mark_of,
)
from ci_eval.errors import InputError

ANN = Stamp("Ann", "2026-12-01T09:00:00Z")
BOB = Stamp("Bob", "2026-12-01T09:05:00Z")


def doc():
    return {"schema_version": 1, "questions": [
        {"id": "q1", "question": "a?", "gold": ["x"]},
        {"id": "q2", "question": "b?", "gold": {"y": 2, "n": 0}},
    ]}


def test_a_grade_lands_in_gold_and_who_and_when_in_provenance():
    before = doc()
    after = apply_grade(before, "q1", "z", 0, ANN)
    assert before == doc()  # the argument is left alone
    # A binary list turns graded the first time it is graded: listed ids keep grade 1.
    assert after["questions"][0]["gold"] == {"x": 1, "z": 0}
    assert after["provenance"]["judgements"]["q1"] == {
        "by": "Ann", "at": ANN.at, "chunks": {"z": {"grade": 0, "by": "Ann", "at": ANN.at}}}
    parse_gold_set(after, "gold.json")  # still a valid gold set


def test_cant_tell_is_recorded_with_its_note_but_is_not_a_judgement():
    after = apply_grade(doc(), "q2", "w", None, ANN, note="needs the 3.12 docs")
    assert after["questions"][1]["gold"] == {"y": 2, "n": 0}
    assert after["provenance"]["judgements"]["q2"]["chunks"]["w"]["note"] == "needs the 3.12 docs"
    assert mark_of(after, "q2", "w") == UNSURE
    assert mark_of(after, "q2", "y") == 2 and mark_of(after, "q1", "x") == 1
    assert mark_of(after, "q1", "nothing") is None


def test_a_second_page_that_saw_an_older_mark_is_refused():
    first = apply_grade(doc(), "q1", "z", 2, ANN)
    with pytest.raises(Conflict) as info:
        apply_grade(first, "q1", "z", 0, BOB, seen=None)
    assert info.value.current == 2
    # Same decision twice (a retried request) is not a conflict.
    assert apply_grade(first, "q1", "z", 2, BOB, seen=None)["questions"][0]["gold"]["z"] == 2
    # Having seen the current mark, a regrade is allowed.
    assert apply_grade(first, "q1", "z", 3, BOB, seen=2)["questions"][0]["gold"]["z"] == 3


def test_grades_outside_zero_to_three_are_refused():
    with pytest.raises(InputError, match="0 to 3"):
        apply_grade(doc(), "q1", "z", 4, ANN)
    with pytest.raises(InputError, match="no question 'q9'"):
        apply_grade(doc(), "q9", "z", 1, ANN)


def test_unanswerable_moves_zero_grades_out_and_refuses_relevant_ones():
    with pytest.raises(InputError, match="has relevant chunks"):
        apply_unanswerable(doc(), "q2", True, ANN)
    zeroed = apply_grade(doc(), "q1", "x", 0, ANN, seen=1)
    # q1 has no relevant chunk left: it waits in pending so the gold set stays valid.
    assert [q["id"] for q in zeroed["questions"]] == ["q2"]
    assert zeroed["provenance"]["pending"] == [{"id": "q1", "question": "a?", "gold": {"x": 0}}]
    parse_gold_set(zeroed, "gold.json")
    marked = apply_unanswerable(zeroed, "q1", True, ANN)
    assert marked["questions"][-1] == {"id": "q1", "question": "a?", "gold": [], "unanswerable": True}
    assert "pending" not in marked["provenance"]
    parse_gold_set(marked, "gold.json")
    with pytest.raises(InputError, match="unanswerable"):
        apply_grade(marked, "q1", "x", 1, ANN, seen=None)
    unmarked = apply_unanswerable(marked, "q1", False, BOB)
    # The 0 grade set aside by the mark comes back: x stays judged, and is not offered again.
    assert unmarked["provenance"]["pending"] == [{"id": "q1", "question": "a?", "gold": {"x": 0}}]
    assert mark_of(unmarked, "q1", "x") == 0
    assert "set_aside" not in unmarked["provenance"]["judgements"]["q1"]
    parse_gold_set(unmarked, "gold.json")


def test_marking_and_unmarking_unanswerable_gives_back_every_grade_it_set_aside():
    start = {"schema_version": 1, "questions": [], "provenance": {"pending": [
        {"id": "q1", "question": "a?", "gold": {"x": 0, "y": 0}}]}}
    marked = apply_unanswerable(start, "q1", True, ANN)
    assert marked["provenance"]["judgements"]["q1"]["set_aside"] == {"x": 0, "y": 0}
    again = apply_unanswerable(marked, "q1", True, ANN)  # a second mark sets nothing more aside
    assert again["provenance"]["judgements"]["q1"]["set_aside"] == {"x": 0, "y": 0}
    unmarked = apply_unanswerable(again, "q1", False, BOB)
    assert unmarked["provenance"]["pending"] == start["provenance"]["pending"]
    assert unmarked["questions"] == []
    # Unmarking a question never marked changes no grade.
    assert apply_unanswerable(unmarked, "q1", False, BOB)["provenance"]["pending"] == start["provenance"]["pending"]


def test_a_pending_question_joins_the_gold_set_with_its_first_relevant_grade():
    pending = {"schema_version": 1, "questions": [],
               "provenance": {"pending": [{"id": "c-1", "question": "new?", "gold": {}}]}}
    once = apply_grade(pending, "c-1", "a", 0, ANN)
    assert once["questions"] == [] and once["provenance"]["pending"][0]["gold"] == {"a": 0}
    twice = apply_grade(once, "c-1", "b", 3, ANN)
    assert twice["questions"] == [{"id": "c-1", "question": "new?", "gold": {"a": 0, "b": 3}}]
    assert "pending" not in twice["provenance"]


def test_editing_the_question_text_normalises_spacing():
    after = apply_edit(doc(), "q2", "  what is   b? ", BOB)
    assert after["questions"][1]["question"] == "what is b?"
    assert after["provenance"]["judgements"]["q2"]["by"] == "Bob"
    with pytest.raises(InputError, match="empty"):
        apply_edit(doc(), "q2", "   ", BOB)


def test_an_edit_from_a_page_that_showed_another_text_is_a_conflict():
    from ci_eval.core.gold.judgement import Conflict as EditConflict

    edited = apply_edit(doc(), "q1", "a, really?", ANN, seen="a?")
    assert edited["questions"][0]["question"] == "a, really?"
    with pytest.raises(EditConflict, match="changed meanwhile") as info:
        apply_edit(edited, "q1", "is it a?", BOB, seen="a?")
    assert info.value.current == "a, really?"
    # The same edit twice (a page sending it again) is no conflict.
    assert apply_edit(edited, "q1", "a, really?", BOB, seen="a?")["questions"][0]["question"] == "a, really?"


def test_a_decision_shares_what_it_leaves_alone_and_changes_nothing_it_was_given():
    import copy

    start = apply_grade(apply_grade(doc(), "q1", "z", 0, ANN), "q2", "w", None, ANN, note="hm")
    start["provenance"]["pending"] = [{"id": "q3", "question": "c?", "gold": {"v": 0}}]
    frozen = copy.deepcopy(start)
    changes = [lambda d: apply_grade(d, "q1", "z", 2, BOB, seen=0),
               lambda d: apply_grade(d, "q3", "v", 1, BOB, seen=0),
               lambda d: apply_unanswerable(d, "q3", True, BOB),
               lambda d: apply_edit(d, "q2", "b, then?", BOB)]
    for change in changes:
        after = change(start)
        assert start == frozen  # the argument is left alone, however the result shares it
        parse_gold_set(after, "gold.json")
    # The questions a decision does not touch are the very same objects: nothing was copied.
    after = apply_grade(start, "q1", "z", 2, BOB, seen=0)
    assert after["questions"][1] is start["questions"][1]
    assert after["provenance"]["judgements"]["q2"] is start["provenance"]["judgements"]["q2"]


def test_a_question_answered_by_span_gold_stays_in_the_gold_set_when_a_chunk_is_graded_0():
    before = {"schema_version": 1, "questions": [
        {"id": "q1", "question": "a?", "gold": [], "evidence": [{"doc": "d.md", "start": 0, "end": 9}]}]}
    after = apply_grade(before, "q1", "z", 0, ANN)
    assert [q["id"] for q in after["questions"]] == ["q1"] and "pending" not in after.get("provenance", {})
    assert after["questions"][0]["evidence"] == before["questions"][0]["evidence"]
    assert parse_gold_set(after, "g.json").questions[0].gold == (("z", 0),)
