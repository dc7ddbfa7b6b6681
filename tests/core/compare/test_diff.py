"""Base vs head: what moved, on which questions, and what is left out of the comparison."""

from __future__ import annotations

import copy
import math

import pytest
from factories import artefact, as_v2, spec
from factories import ranked_with_gold_at as at

from ci_eval.core.compare.diff import config_diff, diff


def _pair(base_ranks: dict, head_ranks: dict, **kw):
    b = artefact([spec(q, ["g"], at(r)) for q, r in base_ranks.items()], **kw)
    h = artefact([spec(q, ["g"], at(r)) for q, r in head_ranks.items()], **kw)
    return b, h


def test_transitions_at_k_and_3k():
    b, h = _pair({"a": 1, "b": 2, "c": None, "d": 7, "e": 6, "f": 1, "g": 4, "h": 3},
                 {"a": 7, "b": None, "c": 2, "d": 3, "e": None, "f": 4, "g": 1, "h": 3})
    got = {q.id: (q.kind, q.base_rank, q.head_rank) for q in diff(b, h).questions}
    assert got == {
        "a": ("lost", 1, 7),  # fell just past k: still within 3k = 15
        "b": ("lost", 2, None),  # vanished
        "c": ("gained", None, 2),
        "d": ("gained", 7, 3),
        "e": ("dropped", 6, None),  # was past k, now out of 3k too
        "f": ("down", 1, 4),
        "g": ("up", 4, 1),
        "h": ("same", 3, 3),
    }
    by_id = {q.id: q for q in diff(b, h).questions}
    assert "just past k" in by_id["a"].detail and "vanished" in by_id["b"].detail


def test_metric_deltas_are_over_the_shared_questions():
    b, h = _pair({"a": 1, "b": 1, "c": 2, "d": None}, {"a": 1, "b": 9, "c": 2, "d": None})
    m = diff(b, h).metric("hit@5")
    assert (m.base, m.head, m.delta) == (3 / 4, 2 / 4, -1 / 4)
    mrr = diff(b, h).metric("mrr")
    assert mrr.delta == pytest.approx((1 / 9 - 1) / 4)
    assert m.test.lost == 1 and m.test.gained == 0


def test_no_base_is_a_normal_branch():
    _, h = _pair({}, {"a": 1, "b": None})
    d = diff(None, h)
    assert not d.has_base and d.compared == () and d.questions == ()
    m = d.metric("hit@5")
    assert m.base is None and m.test is None and m.head_overall == 1 / 2


def test_gold_set_edits_are_listed_and_left_out():
    b = artefact([spec("a", ["g"], at(1)), spec("b", ["g"], at(1)), spec("gone", ["g"], at(1)),
                  spec("re", ["g"], at(1)), spec("flip", ["g"], at(1))])
    h = artefact([spec("a", ["g"], at(1)), spec("b", ["g"], at(None)), spec("new", ["g"], at(3)),
                  spec("re", ["g", "g2"], at(1)),
                  spec("flip", unanswerable=True, ranking=["x"], top=1.0)])
    d = diff(b, h)
    g = d.goldset
    assert [r.id for r in g.added] == ["new"]
    assert [r.id for r in g.removed] == ["gone"]
    assert {r.id: r.note for r in g.relabelled} == {"re": "+1 gold", "flip": "now unanswerable"}
    assert d.compared == ("a", "b")
    assert d.metric("hit@5").base == 1.0 and d.metric("hit@5").head == 1 / 2


def test_regrading_counts_as_a_relabel():
    b = artefact([spec("a", {"g": 1}, at(1))])
    h = artefact([spec("a", {"g": 2}, at(1))])
    assert [r.note for r in diff(b, h).goldset.relabelled] == ["1 gold regraded"]


def test_stale_gold_after_reingestion_is_not_a_regression():
    b = artefact([spec("a", ["g"], at(1)), spec("b", ["g", "h"], at(2)), spec("c", ["g"], at(1))],
                 index_version="v1")
    h = artefact([spec("a", ["g"], at(None), stale=["g"]),
                  spec("b", ["g", "h"], at(None), stale=["g"]),
                  spec("c", ["g"], at(1))], index_version="v2")
    d = diff(b, h)
    assert d.index_changed
    assert d.compared == ("c",)
    assert d.regressions == ()
    assert [q.id for q in d.stale.new] == ["a", "b"]
    assert {q.id: q.status for q in d.stale.head} == {"a": "stale", "b": "ok"}
    assert d.stale.head_ids == 1 and d.stale.base_ids == 0  # distinct ids: both lost "g"


def test_resolved_stale_ids_are_reported():
    b = artefact([spec("a", ["g"], at(None), stale=["g"])])
    h = artefact([spec("a", ["g"], at(1))])
    d = diff(b, h)
    assert [(q.id, q.ids) for q in d.stale.resolved] == [("a", ("g",))]


def test_errors_are_compared_and_fail_as_regressions():
    b = artefact([spec("a", ["g"], at(1))])
    h = artefact([spec("a", ["g"], at(1), error="timeout after 30 s")])
    d = diff(b, h)
    (q,) = d.questions
    assert q.kind == "error" and "timeout" in q.detail
    assert [e.id for e in d.errors] == ["a"]


def test_per_tag_deltas():
    b = artefact([spec("a", ["g"], at(1), tags=["how-to"]), spec("b", ["g"], at(1), tags=["api"]),
                  spec("c", ["g"], at(2), tags=["how-to", "api"])])
    h = artefact([spec("a", ["g"], at(None), tags=["how-to"]), spec("b", ["g"], at(1), tags=["api"]),
                  spec("c", ["g"], at(2), tags=["how-to", "api"])])
    tags = {t.tag: t for t in diff(b, h).tags}
    assert tags["how-to"].n == 2 and tags["how-to"].delta("hit@5") == -1 / 2
    assert tags["api"].delta("hit@5") == 0.0


def test_config_diff_as_dotted_paths():
    changes = config_diff({"retriever": {"params": {"b": 0.75, "k1": 1.2}}, "k": 5},
                          {"retriever": {"params": {"b": 0.9, "k1": 1.2}}, "k": 5, "x": [1]})
    assert [(c.path, c.base, c.head) for c in changes] == [
        ("retriever.params.b", "0.75", "0.9"), ("x", "(unset)", "[1]")]


def test_config_diff_tells_one_from_true():
    (c,) = config_diff({"a": 1}, {"a": True})
    assert (c.base, c.head) == ("1", "true")


def test_latency_and_history_are_carried():
    b, h = _pair({"a": 1}, {"a": 1})
    h["history"] = [{"sha": "b" * 40, "created_at": "2026-11-01T00:00:00Z", "means": {"hit@5": 0.5}}]
    d = diff(b, h)
    assert {s: (x, y) for s, x, y in d.latency}["mean"] == (2.0, 2.0)
    assert d.history[0][2] == (("hit@5", 0.5),)


def test_inputs_are_not_mutated():
    b, h = _pair({"a": 1, "b": 3}, {"a": 4, "b": None})
    before = copy.deepcopy((b, h))
    diff(b, h)
    assert (b, h) == before


def test_the_metric_missing_on_one_side_is_named():
    b = artefact([spec("a", ["g"], at(1))], metrics=["hit@5"])
    h = artefact([spec("a", ["g"], at(1))], metrics=["hit@5", "mrr"])
    d = diff(b, h)
    assert d.metric("mrr").missing == "base" and d.metric("mrr").test is None
    assert d.metric("hit@5").missing is None


def test_a_question_that_moved_both_ways_is_a_regression_and_an_improvement():
    # two gold chunks: "a" slips from rank 1 to 3 and "b" climbs from rank 20 (out of the
    # top 15) to 2: the first relevant is now at rank 2 (mrr 1 -> 1/2), recall@5 1/2 -> 1
    base_rank = [*(f"x{i}" for i in range(20))]
    base_rank[0], base_rank[19] = "a", "b"
    head_rank = ["x0", "b", "a", *(f"x{i}" for i in range(3, 20))]
    b = artefact([spec("q", ["a", "b"], base_rank)])
    h = artefact([spec("q", ["a", "b"], head_rank)])
    d = diff(b, h)
    (q,) = d.questions
    assert q.kind == "mixed" and d.regressions == (q,) and d.improvements == (q,)
    assert q.delta("mrr") == pytest.approx(1 / 2 - 1)  # first relevant now at rank 2
    assert "mrr" in q.worse and "recall@5" in q.better and d.unchanged == ()
    moves = {m.id: (m.base_rank, m.head_rank, m.crossed) for m in q.moves}
    assert moves == {"a": (1, 3, ""), "b": (20, 2, "entered the top 5")}


def test_unchanged_means_every_metric_unchanged():
    b = artefact([spec("q", {"a": 2, "b": 1}, ["a", "b", "x"])])
    same = artefact([spec("q", {"a": 2, "b": 1}, ["a", "b", "x"])])
    moved = artefact([spec("q", {"a": 2, "b": 1}, ["a", "x", "b"])])  # first gold still 1st
    assert [q.kind for q in diff(b, same).questions] == ["same"]
    (q,) = diff(b, moved).questions
    assert q.kind == "down" and q.base_rank == q.head_rank == 1
    assert q.graded and [(m.id, m.grade, m.base_rank, m.head_rank) for m in q.moves] == [
        ("b", 1.0, 2, 3)]


def test_equal_moves_give_equal_deltas_and_a_negative_zero_reads_as_zero():
    b, h = _pair({"a": 1, "b": 1, "c": None, "d": None}, {"a": 3, "b": 3, "c": None, "d": None})
    got = {q.id: q for q in diff(b, h).questions}
    assert got["a"].deltas == got["b"].deltas
    assert got["c"].deltas == got["d"].deltas and not any(d for _, d in got["c"].deltas)
    # a head value written -0.0 counts as 0 (``value``), so no delta is "-0.000"
    assert b["questions"][2]["metrics"]["map"] == 0
    h["questions"][2]["metrics"]["map"] = -0.0
    for pair in ((b, h), (as_v2(b), as_v2(h))):
        got = {q.id: q for q in diff(*pair).questions}
        assert got["c"].delta("map") == 0 and math.copysign(1.0, got["c"].delta("map")) == 1.0
