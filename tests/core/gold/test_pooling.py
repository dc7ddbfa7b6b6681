import pytest

from ci_eval.core.gold.pooling import pool, pool_question


def test_union_of_runs_in_pooled_rank_order():
    head = ["a", "b", "c", "d"]
    base = ["b", "e", "a", "f"]
    # Best rank first: a (head rank 1) before b (base rank 1: same rank, later run); then
    # rank 2: b is already in, e; rank 3: c (head) then nothing new from base (a is in).
    assert pool_question([head, base], depth=3, judged=()) == ("a", "b", "e", "c")


def test_judged_chunks_leave_the_pool_and_depth_cuts_each_run():
    head = ["a", "b", "c", "d"]
    base = ["b", "e", "a", "f"]
    assert pool_question([head, base], depth=2, judged={"a", "e"}) == ("b",)
    assert pool_question([head, base], depth=4, judged={"a", "e"}) == ("b", "c", "d", "f")


def test_a_chunk_takes_its_best_rank_over_all_runs():
    assert pool_question([["x", "y", "z"], ["z"]], depth=3) == ("x", "z", "y")


def test_depth_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        pool_question([["a"]], depth=0)


def test_pool_over_questions_keeps_question_order_and_missing_runs_add_nothing():
    runs = [{"q2": ["a", "b"], "q1": ["c"]}, {"q1": ["d", "c"]}]
    got = pool(runs, ["q1", "q2", "q3"], depth=5, judged={"q2": ["b"]})
    assert list(got) == ["q1", "q2", "q3"]
    assert got == {"q1": ("c", "d"), "q2": ("a",), "q3": ()}
