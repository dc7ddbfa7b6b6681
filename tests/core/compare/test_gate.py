"""Every gate policy, with and without a baseline; stale and errors; CLI overrides."""

from __future__ import annotations

import math

import pytest
from factories import artefact, spec
from factories import ranked_with_gold_at as at

from ci_eval.core.compare.diff import diff
from ci_eval.core.compare.gate import GatePolicy, evaluate_gate, merge_overrides, parse_override
from ci_eval.errors import InputErrors, UsageError


def _run(ranks: dict, tags: dict | None = None, **kw):
    tags = tags or {}
    return artefact([spec(q, ["g"], at(r), tags=tags.get(q, [])) for q, r in ranks.items()], **kw)


def _gate(policy: dict, base, head):
    return evaluate_gate(GatePolicy.from_mapping(policy), diff(base, head))


def _rules(result):
    return [f.rule for f in result.failures]


def _outcome(result, rule: str, subject: str = ""):
    (o,) = [o for o in result.outcomes if o.rule == rule and o.subject == subject]
    return o


# 10 questions; head loses the gold of the first `lost` ones.
def _regression(lost: int, n: int = 10):
    base = _run({f"q{i:02d}": 1 for i in range(n)})
    head = _run({f"q{i:02d}": (None if i < lost else 1) for i in range(n)})
    return base, head


def test_floor_passes_and_fails_and_names_the_misses():
    base, head = _regression(3)
    assert _gate({"min": {"hit@5": 0.7}}, base, head).passed  # 7/10 reaches 0.7
    r = _gate({"min": {"hit@5": 0.8}}, base, head)
    assert _rules(r) == ["min"]
    assert r.failures[0].question_ids == ("q00", "q01", "q02")
    assert r.failures[0].value == pytest.approx(7 / 10) and r.failures[0].threshold == 0.8


def test_floors_apply_without_a_baseline():
    _, head = _regression(3)
    r = _gate({"min": {"hit@5": 0.8}, "max_drop": {"hit@5": 0.0}, "max_new_misses": 0}, None, head)
    assert _rules(r) == ["min"]
    for rule, subject in (("max_drop", "hit@5"), ("max_new_misses", "")):
        o = _outcome(r, rule, subject)
        assert o.status == "not applicable" and "no baseline" in o.message


def test_a_floor_on_an_unmeasured_metric_fails_closed():
    _, head = _regression(0)
    r = _gate({"min": {"ndcg@10": 0.1}}, None, head)
    assert not r.passed and "did not measure" in r.failures[0].message


def test_significant_drop_beyond_max_drop_fails():
    # 12 lost, 0 gained: p = 2 / 2**12 for every metric; Holm over the K metrics of the
    # table multiplies the smallest by K, still below 0.05 for K up to 100
    base, head = _regression(12, n=40)
    r = _gate({"max_drop": {"hit@5": 0.05}}, base, head)
    assert _rules(r) == ["max_drop"]
    assert len(r.failures[0].question_ids) == 12 and "significant" in r.failures[0].message


def test_max_drop_tests_the_promised_metric_one_sided_uncorrected_by_the_others():
    # 5 lost of 40: the table's two-sided score test gives erfc(sqrt(5/2)) = 0.025 on its
    # own, and Holm over the K > 6 metrics that all move with it puts it past 0.05, while
    # the gate's exact one-sided test for a drop is 1 / 2**5 = 0.031, corrected by nothing
    base, head = _regression(5, n=40)
    d = diff(base, head)
    t = d.metric("hit@5").test
    assert t.p_value == pytest.approx(math.erfc(math.sqrt(5 / 2))) and t.raw_significant
    assert t.family == len(d.metrics) > 6 and not t.significant
    assert t.p_drop == 1 / 2**5
    r = evaluate_gate(GatePolicy.from_mapping({"max_drop": {"hit@5": 0.05}}), d)
    o = _outcome(r, "max_drop", "hit@5")
    assert not r.passed and o.status == "failed" and "a significant drop" in o.message
    assert "exact one-sided McNemar test for a drop: p=0.031" in o.message and "Holm" not in o.message
    # two max_drop rules are one family among themselves: Holm over the two, 2 / 2**5
    r = evaluate_gate(GatePolicy.from_mapping({"max_drop": {"hit@5": 0.05, "mrr": 0.05}}), d)
    o = _outcome(r, "max_drop", "hit@5")
    assert r.passed and "Holm over the 2 max_drop metrics" in o.message and "p=0.062" in o.message


def test_drop_within_noise_is_a_note_unless_regressions_always():
    base, head = _regression(2, n=40)  # 2 lost: one-sided p = 1/4
    r = _gate({"max_drop": {"hit@5": 0.01}}, base, head)
    o = _outcome(r, "max_drop", "hit@5")
    assert r.passed and o.status == "passed" and "not a significant drop" in o.message
    assert "p=0.250" in o.message
    r = _gate({"max_drop": {"hit@5": 0.01}, "regressions": "always"}, base, head)
    assert _rules(r) == ["max_drop"] and r.failures[0].question_ids == ("q00", "q01")


def test_a_drop_inside_the_allowance_passes():
    base, head = _regression(8, n=40)
    assert _gate({"max_drop": {"hit@5": 0.2}}, base, head).passed  # fell 8/40 = 0.2


def test_max_drop_on_a_metric_missing_on_base_is_not_applicable_and_says_why():
    ids = [f"q{i}" for i in range(8)]
    base = _run({q: 1 for q in ids}, metrics=["hit@5"])
    head = _run({q: None for q in ids}, metrics=["hit@5", "mrr"])
    r = _gate({"max_drop": {"mrr": 0.0}}, base, head)
    o = _outcome(r, "max_drop", "mrr")
    assert r.passed and o.status == "not applicable" and "not measured on base" in o.message


def test_protected_questions_must_stay_hits():
    base, head = _regression(2)
    r = _gate({"protected": ["q01", "q05"]}, base, head)
    assert _rules(r) == ["protected"] and r.failures[0].question_ids == ("q01",)
    r = _gate({"protected": ["nope"]}, base, head)
    assert "not in this run" in r.failures[0].message


def test_max_new_misses():
    base, head = _regression(3)
    assert _gate({"max_new_misses": 3}, base, head).passed
    r = _gate({"max_new_misses": 2}, base, head)
    assert _rules(r) == ["max_new_misses"] and r.failures[0].question_ids == ("q00", "q01", "q02")


def test_tag_floors():
    tags = {"q00": ["how-to"], "q01": ["how-to"], "q02": ["api"]}
    base = _run({"q00": 1, "q01": 1, "q02": 1}, tags)
    head = _run({"q00": None, "q01": 1, "q02": 1}, tags)
    r = _gate({"tag_min": {"how-to": {"hit@5": 0.6}, "api": {"hit@5": 1.0}}}, base, head)
    assert _rules(r) == ["tag_min"] and r.failures[0].question_ids == ("q00",)
    assert r.failures[0].subject == "how-to/hit@5"
    r = _gate({"tag_min": {"missing-tag": {"hit@5": 0.5}}}, base, head)
    assert not r.passed and "no measured questions" in r.failures[0].message


def test_stale_gold_never_fails_as_a_regression_only_max_stale():
    live = [f"c{i}" for i in range(6)]  # enough left to compare
    base = _run({q: 1 for q in ["a", "b", *live]}, index_version="v1")
    head = artefact([spec("a", ["g"], at(None), stale=["g"]), spec("b", ["g"], at(None), stale=["g"])]
                    + [spec(q, ["g"], at(1)) for q in live], index_version="v2")
    strict = {"max_drop": {"hit@5": 0.0}, "regressions": "always", "max_new_misses": 0,
              "protected": ["a"]}
    r = _gate(strict, base, head)
    assert r.passed, r.failures
    r = _gate({**strict, "max_stale": 1}, base, head)
    assert _rules(r) == ["max_stale"] and r.failures[0].question_ids == ("a", "b")


def test_retriever_errors_fail_closed_even_without_rules():
    base = _run({"a": 1, "b": 1})
    head = artefact([spec("a", ["g"], at(1)), spec("b", ["g"], at(1), error="boom")])
    for b in (base, None):
        r = _gate({}, b, head)
        assert _rules(r) == ["errors"] and r.failures[0].question_ids == ("b",)


def test_an_empty_policy_says_so():
    base, head = _regression(0)
    r = _gate({}, base, head)
    assert r.passed and any("no gate rules" in n for n in r.notes)


def test_from_mapping_reports_every_problem():
    with pytest.raises(InputErrors) as err:
        GatePolicy.from_mapping({"min": {"hit@5": "high"}, "regressions": "sometimes",
                                 "max_stale": -1, "bogus": 1})
    places = sorted(p.place for p in err.value.problems)
    assert places == ["bogus", "max_stale", "min.hit@5", "regressions"]


def test_from_mapping_canonicalises_trec_names():
    assert GatePolicy.from_mapping({"min": {"success_5": 0.8}}).min == (("hit@5", 0.8),)


def test_cli_overrides_win_metric_by_metric():
    p = GatePolicy.from_mapping({"min": {"hit@5": 0.8, "mrr": 0.5}})
    merged = merge_overrides(p, ["hit@5=0.9"], ["mrr=0.05"])
    assert dict(merged.min) == {"hit@5": 0.9, "mrr": 0.5}
    assert dict(merged.max_drop) == {"mrr": 0.05}


@pytest.mark.parametrize("text", ["hit@5", "hit@5=", "=0.8", "hit@5=high", "hit@5=nan"])
def test_bad_override_is_a_usage_error(text):
    with pytest.raises(UsageError):
        parse_override(text, "--min")


def test_an_unknown_metric_in_the_gate_is_named_with_its_place():
    with pytest.raises(InputErrors) as err:
        GatePolicy.from_mapping({"max_drop": {"hitt@5": 0.1}, "tag_min": {"api": {"nope": 1}}})
    assert sorted(p.place for p in err.value.problems) == ["max_drop.hitt@5", "tag_min.api.nope"]


def _staged_run(pool_ranks: list):
    """Head with a pool stage: question i's gold at ``pool_ranks[i]`` (None: not in the pool)."""
    head = _run({f"q{i}": 1 for i in range(len(pool_ranks))})
    head["stages"] = {"chain": [{"name": "pool", "depth": 50}, {"name": "results", "depth": 5}],
                      "questions": {f"q{i}": {"gold": 1, "ranks": [[] if r is None else [r], [1]]}
                                    for i, r in enumerate(pool_ranks)}}
    return head


def test_a_floor_on_the_pool_recall_is_held_apart_from_the_final_list():
    pool = [1, 3, None, 7]
    recall = sum(r is not None for r in pool) / len(pool)
    head = _staged_run(pool)
    failed = _outcome(_gate({"stage_min": {"pool": recall + 0.01}}, None, head), "stage_min", "stage pool")
    assert failed.failed and failed.value == pytest.approx(recall)
    held = _outcome(_gate({"stage_min": {"pool": recall}}, None, head), "stage_min", "stage pool")
    assert not held.failed


def test_a_floor_on_a_stage_the_run_did_not_record_fails_closed():
    outcome = _outcome(_gate({"stage_min": {"rerank": 0.5}}, None, _staged_run([1])), "stage_min", "stage rerank")
    assert outcome.failed and "recorded no such stage" in outcome.message
