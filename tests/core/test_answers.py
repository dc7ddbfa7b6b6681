"""The join of end-to-end verdicts to the gold set (core/answers.py), without files."""

from __future__ import annotations

from ci_eval.core.answers import AnswerRow, AnswersSpec, join_lines, match_answers, source_text

QUESTIONS = [("q1", "one"), ("q2", "two"), ("q3", "same"), ("q4", "same")]


def _row(n, qid=None, text=None, passed=None, score=None, error=None):
    return AnswerRow(f"row {n}", qid, text, passed, score, error)


def test_an_id_wins_over_the_text_and_an_unknown_id_is_never_guessed_from_it():
    m = match_answers([_row(1, "q9", "one", True), _row(2, None, "two", False)], QUESTIONS, AnswersSpec())
    assert m.verdicts == {"q2": False}
    assert (m.unmatched.count, m.unmatched.first) == (1, "row 1: id 'q9' is not in the gold set")
    assert (m.missing.count, m.missing.first) == (3, "q1")


def test_shared_text_is_ambiguous_and_counted_not_joined():
    m = match_answers([_row(1, None, "same", True), _row(2, None, "same", True)], QUESTIONS, AnswersSpec())
    assert m.verdicts == {} and m.ambiguous.count == 2
    assert m.ambiguous.first == "row 1: 'same' is the text of q3, q4"


def test_a_threshold_reads_the_score_and_a_row_without_one_has_no_verdict():
    spec = AnswersSpec("ragas", metric="answer_correctness", threshold=0.7)
    rows = [_row(1, "q1", score=0.7), _row(2, "q2", score=0.69), _row(3, "q3", score=None)]
    m = match_answers(rows, QUESTIONS, spec)
    assert m.verdicts == {"q1": True, "q2": False}
    assert m.no_verdict.count == 1 and m.no_verdict.first == "row 3: no verdict (q3)"
    assert spec.correct_rule() == "answer_correctness ≥ 0.7"


def test_an_errored_row_gives_no_verdict_even_when_marked_failed():
    m = match_answers([_row(1, "q1", passed=False, error="provider error")], QUESTIONS, AnswersSpec("promptfoo"))
    assert m.verdicts == {} and m.no_verdict.first == "row 1: provider error (q1)"


def test_repeats_all_majority_any_and_a_tie():
    rows = [_row(1, "q1", passed=True), _row(2, "q1", passed=False),  # a tie: 1 of 2
            _row(3, "q2", passed=True), _row(4, "q2", passed=True), _row(5, "q2", passed=False)]
    decided = {rule: match_answers(rows, QUESTIONS, AnswersSpec(repeats=rule)).verdicts
               for rule in ("all", "majority", "any")}
    assert decided == {"all": {"q1": False, "q2": False}, "majority": {"q1": False, "q2": True},
                       "any": {"q1": True, "q2": True}}
    m = match_answers(rows, QUESTIONS, AnswersSpec())
    assert (m.repeated, m.disagreeing) == (2, 2)


def test_the_record_words_what_did_not_join_and_where_it_came_from():
    m = match_answers([_row(1, "zz", passed=True), _row(2, "q1", passed=True)], QUESTIONS, AnswersSpec())
    record = m.record({"type": "jsonl", "path": "eval/a.jsonl", "commit": "f" * 40, "changed": False})
    assert join_lines(record) == [
        "3 gold questions not covered by the end-to-end run (first: q2), kept out of the failure matrix",
        "1 result matched no gold question (first: row 1: id 'zz' is not in the gold set)"]
    assert source_text(record) == "answers file eval/a.jsonl, last committed in fffffff"
    assert source_text({**record, "changed": True}).endswith("not committed (written in this job or changed locally)")


def test_a_long_id_is_cut_where_it_is_named():
    m = match_answers([_row(1, "x" * 5000, passed=True)], QUESTIONS, AnswersSpec())
    assert len(m.unmatched.first) <= 500
