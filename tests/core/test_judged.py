from ci_eval.core.judged import judged_at_k, judged_report, mean_judged, unjudged_in_top_k


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


def _art(rankings: dict, gold: dict, k: int = 3, status: str = "ok") -> dict:
    return {"k": k, "questions": [
        {"id": qid, "status": status, "gold": gold.get(qid, {}), "ranking": [{"id": c, "score": 1.0} for c in ids]}
        for qid, ids in rankings.items()]}


def test_the_report_counts_only_unjudged_results_the_head_brought_in():
    gold = {"q1": {"a": 1, "b": 0}, "q2": {"g": 1}}
    base = _art({"q1": ["a", "b", "c"], "q2": ["g", "x", "y"]}, gold)
    # q1: d is new and unjudged, c was already in the base's top 3; q2: z and w are new and
    # unjudged, g fell out of the top 3 (a regression whose new results are all unjudged).
    head = _art({"q1": ["a", "d", "c"], "q2": ["x", "z", "w", "g"]}, gold)
    report = judged_report(base, head, ["q2"])
    assert (report.new_unjudged, report.questions) == (1 + 2, 2)
    assert report.suspects == {"q2"}
    assert report.head_mean == (1 / 3 + 0 / 3) / 2
    assert report.base_mean == (2 / 3 + 1 / 3) / 2


def test_a_regression_that_brought_a_judged_chunk_is_not_suspect():
    gold = {"q1": {"a": 1, "n": 0}}
    base = _art({"q1": ["a", "b", "c"]}, gold)
    head = _art({"q1": ["n", "b", "c", "a"]}, gold)  # n was judged not relevant
    report = judged_report(base, head, ["q1"])
    assert report.suspects == frozenset() and report.new_unjudged == 0


def test_without_a_base_every_unjudged_top_k_result_counts_and_unmeasured_questions_do_not():
    head = _art({"q1": ["a", "b"]}, {"q1": {"a": 1}})
    head["questions"].append({"id": "u1", "status": "unanswerable", "gold": {}, "ranking": [{"id": "z", "score": 1}]})
    report = judged_report(None, head, [])
    assert (report.new_unjudged, report.questions, report.compared) == (1, 1, False)
    assert report.head_mean == 1 / 2 and report.base_mean is None
