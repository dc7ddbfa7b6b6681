"""Metric kernels: expected values are derivations from trec_eval 10.0's definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from suite_paths import DOCS

from ci_eval.core.measure.metrics import compute, describe
from ci_eval.core.measure.names import FAMILIES, Metric, default_metrics, resolve_metric
from ci_eval.errors import InputError


def one(metric, ranking, judgment, level=1):
    return float(compute([metric], [ranking], [judgment], level)[resolve_metric(metric).name][0])


# ranking: b a d e c  (the edge fixture, after trec_eval's tie order)
RANKING = ["b", "a", "d", "e", "c"]
JUDGED = {"a": 1, "b": 0, "c": 2, "d": -1}


@pytest.mark.parametrize(
    "metric, expected",
    [
        ("hit@1", 0.0),
        ("hit@2", 1.0),
        ("precision@2", 1 / 2),
        ("precision@10", 2 / 10),  # divides by k, not by the 5 retrieved
        ("recall@1", 0.0),
        ("recall@2", 1 / 2),
        ("recall@5", 2 / 2),
        ("mrr", 1 / 2),
        ("mrr@1", 0.0),
        ("mrr@2", 1 / 2),
        ("map", (1 / 2 + 2 / 5) / 2),
        # gains: b=0, a=1, d=-1 (counts 0), e unjudged, c=2; ideal 2, 1
        ("ndcg@2", (1 / math.log2(3)) / (2 + 1 / math.log2(3))),
        ("ndcg@5", (1 / math.log2(3) + 2 / math.log2(6)) / (2 + 1 / math.log2(3))),
    ],
)
def test_graded_ranking_with_negative_grade(metric, expected):
    assert one(metric, RANKING, JUDGED) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    "metric, expected",
    [
        ("precision@2", 0.0),
        ("precision@10", 1 / 10),
        ("recall@5", 1 / 1),  # R counts only c (grade 2)
        ("mrr", 1 / 5),
        ("map", (1 / 5) / 1),
        # nDCG ignores the level: gains stay the raw grades
        ("ndcg@5", (1 / math.log2(3) + 2 / math.log2(6)) / (2 + 1 / math.log2(3))),
    ],
)
def test_relevance_level_two(metric, expected):
    assert one(metric, RANKING, JUDGED, level=2) == pytest.approx(expected, abs=1e-15)


def test_relevance_level_zero_counts_grade_zero_but_not_unjudged():
    assert one("precision@5", RANKING, JUDGED, level=0) == 3 / 5  # b, a, c; not d, e
    assert one("recall@5", RANKING, JUDGED, level=0) == 3 / 3


def test_negative_level_is_rejected():
    with pytest.raises(InputError, match="relevance level"):
        compute(["map"], [RANKING], [JUDGED], relevance_level=-1)


def test_average_precision_counts_missed_relevant_documents():
    judged = {"a": 1, "c": 1, "z": 1}  # z never retrieved
    assert one("map", ["a", "b", "c"], judged) == pytest.approx((1 / 1 + 2 / 3) / 3)


def test_mean_reciprocal_rank_has_no_cutoff():
    ranking = [f"n{i}" for i in range(50)] + ["hit"]
    assert one("mrr", ranking, {"hit": 1}) == pytest.approx(1 / 51)
    assert one("mrr@50", ranking, {"hit": 1}) == 0.0


def test_ndcg_ideal_uses_best_grades_first_and_stops_at_k():
    judged = {"x": 1, "y": 3, "z": 2}
    expected = (1 / 1 + 3 / math.log2(3)) / (3 / 1 + 2 / math.log2(3))
    assert one("ndcg@2", ["x", "y"], judged) == pytest.approx(expected, abs=1e-15)


def test_no_relevant_documents_scores_zero():
    for metric in ("hit@5", "recall@5", "precision@5", "ndcg@5", "mrr", "map"):
        assert one(metric, ["x", "y"], {"x": 0, "y": 0}) == 0.0


def test_empty_ranking_scores_zero():
    values = compute(default_metrics(2), [[], ["a"]], [{"a": 1}, {"a": 1}])
    for name, column in values.items():
        assert column[0] == 0.0, name
    assert values["hit@2"][1] == 1.0


def test_no_rankings_at_all():
    values = compute(["map", "hit@3"], [], [])
    assert values["map"].shape == (0,) and values["hit@3"].dtype == np.float64


def test_results_align_with_inputs():
    rankings = [["a"], ["b", "a"], ["c"]]
    judgments = [{"a": 1}, {"a": 1}, {}]
    values = compute(["mrr"], rankings, judgments)["mrr"]
    assert values.tolist() == [1 / 1, 1 / 2, 0.0]


def test_inputs_are_not_modified():
    rankings = [["a", "b"]]
    judgments = [{"a": -1, "b": 2}]
    compute(default_metrics(1), rankings, judgments)
    assert rankings == [["a", "b"]] and judgments == [{"a": -1, "b": 2}]


def test_duplicate_id_in_a_ranking_is_rejected():
    with pytest.raises(InputError, match="twice"):
        compute(["map"], [["a", "a"]], [{"a": 1}])


@pytest.mark.parametrize(
    "name, canonical, trec, k",
    [
        ("hit@5", "hit@5", "success_5", 5),
        ("success_5", "hit@5", "success_5", 5),
        ("success.5", "hit@5", "success_5", 5),
        ("P_5", "precision@5", "P_5", 5),
        ("P.5", "precision@5", "P_5", 5),
        ("precision@5", "precision@5", "P_5", 5),
        ("recall_5", "recall@5", "recall_5", 5),
        ("ndcg_cut_10", "ndcg@10", "ndcg_cut_10", 10),
        ("NDCG@10", "ndcg@10", "ndcg_cut_10", 10),
        ("recip_rank", "mrr", "recip_rank", None),
        ("mrr", "mrr", "recip_rank", None),
        ("mrr@10", "mrr@10", None, 10),
        ("map", "map", "map", None),
    ],
)
def test_resolve_metric(name, canonical, trec, k):
    m = resolve_metric(name)
    assert (m.name, m.trec_name, m.k) == (canonical, trec, k)
    assert isinstance(m, Metric) and describe(m.family)


@pytest.mark.parametrize("name", ["hit", "hit@0", "hit@x", "map@5", "ndgc@5", "", "bpref"])
def test_unknown_metrics_are_input_errors_listing_what_is_accepted(name):
    with pytest.raises(InputError) as err:
        resolve_metric(name)
    assert "Accepted: hit@K" in str(err.value)


def test_close_match_is_suggested():
    with pytest.raises(InputError, match="Did you mean 'ndcg@5'"):
        resolve_metric("ndgc@5")


def test_default_metrics():
    assert default_metrics(5) == [
        "hit@5", "recall@5", "precision@5", "ndcg@5", "mrr",
        "hit@15", "recall@15", "precision@15", "ndcg@15", "map",
    ]


def test_every_family_documents_its_convention_and_formula():
    for family in FAMILIES:
        text = describe(family.key)
        assert "=" in text and len(text.splitlines()) >= 3, family.key


def test_docs_metrics_md_is_generated_from_the_registry():

    from ci_eval.commands.metrics import render

    page = DOCS / "metrics.md"
    assert page.read_text("utf-8") == render(markdown=True), (
        "docs/metrics.md is out of date: run `ci-eval metrics --markdown > docs/metrics.md`"
    )


# --------------------------------------------------------------------------- the sparse table
# The table keeps only the ranked documents judged 0 or more. These tests hold it to the
# full (queries x depth) computation, term by term in the same order, to the last bit.


def _dense_reference(names, rankings, judgments, level):
    """Every metric over the full grade matrix, summed rank by rank as trec_eval does."""
    n = len(rankings)
    depth = max((len(r) for r in rankings), default=0)
    width = max((len(j) for j in judgments), default=0)
    grades = np.full((n, depth), -1.0)
    judged = np.full((n, width), -1.0)
    for q, (ranking, judgment) in enumerate(zip(rankings, judgments)):
        grades[q, : len(ranking)] = [judgment.get(i, -1) for i in ranking]
        values = sorted((float(g) for g in judgment.values()), reverse=True)
        judged[q, : len(values)] = values
    grades[grades < 0] = -1.0
    judged[judged < 0] = -1.0
    relevant = grades >= level
    found = np.cumsum(relevant, axis=1, dtype=np.int64)
    num_rel = np.count_nonzero(judged >= level, axis=1)

    def found_at(k):
        return found[:, min(k, depth) - 1] if depth else np.zeros(n, dtype=np.int64)

    def discounted(gains):
        return np.cumsum(np.maximum(gains, 0.0) / np.log2(np.arange(2, gains.shape[1] + 2.0)),
                         axis=1)

    def ratio(a, b):
        a, b = np.asarray(a, float), np.asarray(b, float)
        out = np.zeros(n)
        np.divide(a, b, out=out, where=b != 0)
        return out

    first = (np.where(relevant.any(axis=1), np.argmax(relevant, axis=1) + 1, 0) if depth
             else np.zeros(n, dtype=np.int64))
    out = {}
    for name in names:
        m = resolve_metric(name)
        k = m.k
        if m.family == "hit":
            out[m.name] = (found_at(k) > 0).astype(float)
        elif m.family == "recall":
            out[m.name] = ratio(found_at(k), num_rel)
        elif m.family == "precision":
            out[m.name] = found_at(k) / float(k)
        elif m.family == "ndcg":
            dcg = discounted(grades)[:, min(k, depth) - 1] if depth else np.zeros(n)
            idcg = discounted(judged)[:, min(k, width) - 1] if width else np.zeros(n)
            out[m.name] = ratio(dcg, idcg)
        elif m.family == "mrr":
            keep = first > 0 if k is None else (first > 0) & (first <= k)
            out[m.name] = ratio(keep.astype(float), first)
        else:
            total = (np.cumsum(np.where(relevant, found / np.arange(1.0, depth + 1), 0.0),
                               axis=1)[:, -1] if depth else np.zeros(n))
            out[m.name] = ratio(total, num_rel)
    return out


NAMES = ["hit@1", "hit@3", "recall@2", "recall@50", "precision@1", "precision@7", "ndcg@1",
         "ndcg@3", "ndcg@25", "mrr", "mrr@2", "map"]


def _random_case(rng):
    rankings, judgments = [], []
    for _ in range(int(rng.integers(0, 8))):
        pool = [f"d{i}" for i in range(int(rng.integers(1, 40)))]
        ranking = list(rng.permutation(pool)[: int(rng.integers(0, len(pool) + 1))])
        grades = [-2, -1, 0, 1, 2, 3, 0.5, 2.5]
        judgment = {str(d): grades[int(rng.integers(0, len(grades)))]
                    for d in rng.choice(pool + ["x", "y"], int(rng.integers(0, 10)))}
        rankings.append(ranking if rng.random() < 0.7 else tuple(ranking))
        judgments.append(judgment)
    return rankings, judgments


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("level", [0, 1, 2])
def test_compute_equals_the_full_matrix_to_the_last_bit(seed, level):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        rankings, judgments = _random_case(rng)
        got = compute(NAMES, rankings, judgments, level)
        expected = _dense_reference(NAMES, rankings, judgments, level)
        for name in expected:
            assert [x.hex() for x in got[name].tolist()] == \
                [x.hex() for x in expected[name].tolist()], name


def test_queries_without_any_judged_result():
    values = compute(NAMES, [["a", "b"], []], [{"z": 2}, {}])
    for name, column in values.items():
        assert column.tolist() == [0.0, 0.0], name


def test_grade_table_keeps_the_full_matrix():
    from ci_eval.core.measure.metrics import GradeTable, build_table

    table = build_table([["a", "b", "c"], ["d"]], [{"c": 2, "a": -1, "z": 1}, {"d": 0}])
    assert table.grades.tolist() == [[-1.0, -1.0, 2.0], [0.0, -1.0, -1.0]]
    again = GradeTable.from_grades(table.grades, table.lengths, table.judged)
    assert compute_table_values(again) == compute_table_values(table)


def compute_table_values(table):
    from ci_eval.core.measure.metrics import compute_table

    return {k: v.tolist() for k, v in compute_table(NAMES, table).items()}


def test_rankings_may_be_any_sequence_and_ids_any_hashable():
    values = compute(["mrr", "precision@2"], [iter([3, 1]), (x for x in "ba")],
                     [{1: 1}, {"a": 2}])
    assert values["mrr"].tolist() == [1 / 2, 1 / 2]
    assert values["precision@2"].tolist() == [1 / 2, 1 / 2]
