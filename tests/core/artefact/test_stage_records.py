"""core/artefact/stage_records.py: what a run records of its stages and calls."""

from __future__ import annotations

from ci_eval.core.artefact.results import Retrieved
from ci_eval.core.artefact.stage_records import StageCollector


def answer(ids, calls=()) -> Retrieved:
    return Retrieved(tuple(ids), tuple(1.0 / (i + 1) for i in range(len(ids))), None, None, (), None, (), calls)


def test_the_relevant_gold_is_gathered_only_once_an_answer_has_calls():
    # No chain and no calls: nothing is recorded, and the relevant gold of every question
    # (a dict as large as the gold set) is never built.
    asked = []

    def relevant():
        asked.append(1)
        return {"q1": ["g"], "q2": ["g"]}

    collector = StageCollector((), 3, None, relevant, None)
    passed = list(collector.passing([("q1", answer(["a", "g"])), ("q2", answer(["g"]))]))
    assert [qid for qid, _ in passed] == ["q1", "q2"] and asked == []
    assert collector.result().recorded() == {}
    # the first answer with calls builds it, once
    collector.add("q1", answer(["a", "g"], calls=(("a",), ("g",))))
    collector.add("q2", answer(["g"], calls=(("g",),)))
    assert asked == [1]
    recorded = collector.result().recorded()["calls"]["questions"]
    assert recorded["q1"]["sizes"] == [1, 1] and recorded["q1"]["found_at"] == 2
    assert recorded["q2"]["found_at"] == 1 and recorded["q2"]["final_hit"]
