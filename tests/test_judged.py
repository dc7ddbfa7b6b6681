from ci_eval.core.judged import judged_at_k, mean_judged, unjudged_in_top_k


def test_share_of_the_top_k_that_carries_any_judgement():
    ranking = ["a", "b", "c", "d", "e", "f"]
    judged = {"a", "c", "f"}  # f is judged but outside the top 5
    assert judged_at_k(ranking, judged, 5) == 2 / 5
    assert unjudged_in_top_k(ranking, judged, 5) == ("b", "d", "e")


def test_a_short_ranking_divides_by_what_came_back():
    assert judged_at_k(["a", "b"], {"a", "b"}, 5) == 2 / 2
    assert judged_at_k([], {"a"}, 5) is None


def test_mean_skips_questions_without_results():
    assert mean_judged([1.0, None, 0.5]) == (1.0 + 0.5) / 2
    assert mean_judged([None]) is None
