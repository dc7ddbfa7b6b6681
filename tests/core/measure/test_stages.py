"""The stage chain, its records and the calls rule (core/measure/stages.py), each expected
value counted from the lists in the test."""

from __future__ import annotations

from ci_eval.core.measure.stages import (
    FINAL,
    StageSpec,
    call_ranks,
    found_at,
    packed,
    stage_chain,
    stage_lists,
    stage_record,
    summarise,
)


def test_the_final_list_goes_before_the_first_packing_stage_at_depth_k():
    chain = stage_chain([StageSpec("pool", 50), StageSpec("rerank", 10), StageSpec("packed", chars=900)], k=5)
    assert [s.name for s in chain] == ["pool", "rerank", FINAL, "packed"]
    assert chain[2].depth == 5
    assert [s.name for s in stage_chain([StageSpec("pool", 50)], k=3)] == ["pool", FINAL]
    named = stage_chain([StageSpec(FINAL), StageSpec("pool", 50)], k=4)
    assert named == (StageSpec(FINAL, 4), StageSpec("pool", 50))


def test_packing_sends_the_prefix_that_fits_and_stops_at_the_first_that_does_not():
    lengths = {"a": 300, "b": 800, "c": 100}
    assert packed(["a", "b", "c"], lengths, 1000) == ("a",)  # c would fit, but a packer sends a prefix
    assert packed(["a", "c", "b"], lengths, 1000) == ("a", "c")
    assert packed(["x", "a"], lengths, 1000) == ()  # an unknown length stops it


def test_the_first_stage_without_the_gold_lost_it():
    chain = stage_chain([StageSpec("pool", 4), StageSpec("rerank", 2)], k=2)
    final = ["g", "d1"]
    lists = stage_lists(chain, {"pool": ["d1", "d2", "g", "d3", "d4"], "rerank": ["d1", "d2", "g"]}, final, None)
    assert lists == (("d1", "d2", "g", "d3"), ("d1", "d2"), ("g", "d1"))
    record = stage_record(lists, ["g"])
    assert record.ranks == ((3,), (), (1,))
    assert record.lost_at() == 1  # the reranker cut it, even though the final list has it again
    assert record.added == (0, 0, 1)  # the final list holds "g", which the reranker's top 2 did not


def test_a_stage_not_reported_is_skipped():
    record = stage_record([("g",), None, ()], ["g"])
    assert record.lost_at() == 2
    assert stage_record([None, ("g",)], ["g"]).lost_at() is None


def test_recall_at_each_stage_is_the_share_of_relevant_gold_in_its_list():
    chain = (StageSpec("pool", 3), StageSpec(FINAL, 1))
    records = [stage_record([("a", "b", "x"), ("a",)], ["a", "b"]), stage_record([("x", "y", "z"), ("x",)], ["c"])]
    pool, final = summarise(chain, records)
    assert pool.recall == (2 / 2 + 0 / 1) / 2
    assert final.recall == (1 / 2 + 0 / 1) / 2
    assert (pool.held, pool.lost, final.held, final.lost) == (1, 1, 1, 0)


def test_a_second_call_that_finds_the_gold_is_a_hit_at_that_call_within_the_budget():
    calls = [[f"m{i}" for i in range(10)], ["g", "m0"]]
    ranks = call_ranks(calls, ["g"])
    assert ranks == ((), (1,))
    sizes = [len(c) for c in calls]
    assert found_at(sizes, ranks, None) == 2
    assert found_at(sizes, ranks, sizes[0] + 1) == 2  # the gold is the 11th chunk sent
    assert found_at(sizes, ranks, sizes[0]) is None
