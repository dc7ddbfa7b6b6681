"""Per-query agreement with pytrec_eval (trec_eval 9.x inside) on random tie-heavy data.

pytrec_eval keeps scores as float32, trec_eval 10.0 as doubles; the scores here are
multiples of 1/4 below 8, exact in both, so both tools see the same ties.
"""

from __future__ import annotations

import numpy as np
import pytest

from ci_eval.core.measure.metrics import compute_table
from ci_eval.trec import parse as trec
from ci_eval.trec.judge import judge

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = {
    "P_1": "precision@1", "P_5": "precision@5", "P_10": "precision@10",
    "recall_5": "recall@5", "recall_10": "recall@10", "recall_30": "recall@30",
    "ndcg_cut_3": "ndcg@3", "ndcg_cut_10": "ndcg@10", "ndcg_cut_30": "ndcg@30",
    "success_1": "hit@1", "success_5": "hit@5", "success_10": "hit@10",
    "recip_rank": "mrr", "map": "map",
}
TREC_PARAMS = {"P.1,5,10", "recall.5,10,30", "ndcg_cut.3,10,30", "success.1,5,10",
               "recip_rank", "map"}


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    qrels: dict = {}
    run: dict = {}
    for q in range(40):
        qid = f"q{q}"
        docs = [f"d{i}" for i in rng.choice(200, size=60, replace=False)]
        judged = docs[: int(rng.integers(1, 30))] + [f"x{q}-{i}" for i in range(3)]
        qrels[qid] = {d: int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
        depth = int(rng.integers(0, 40))
        retrieved = list(rng.permutation(docs)[:depth])
        run[qid] = {d: float(rng.integers(0, 32)) / 4 for d in retrieved}
    return qrels, run


def ours(qrels: dict, run: dict, level: int) -> dict:
    qtext = "".join(f"{q} 0 {d} {g}\n" for q, j in qrels.items() for d, g in j.items())
    rtext = "".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, r in run.items() for d, s in r.items())
    judged = judge(trec.parse_qrels(qtext.encode(), "q"), trec.parse_run(rtext.encode(), "r"),
                        relevance_level=level)
    values = compute_table(list(MEASURES.values()), judged.table)
    return {qid: {t: float(values[m][i]) for t, m in MEASURES.items()}
            for i, qid in enumerate(judged.qids)}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [1, 2])
def test_agrees_with_pytrec_eval_per_query(seed, level):
    qrels, run = random_case(seed)
    run = {q: r for q, r in run.items() if r}  # pytrec_eval skips empty rankings anyway
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC_PARAMS, relevance_level=level).evaluate(run)
    got = ours(qrels, run, level)
    assert set(got) == set(expected)
    for qid, values in expected.items():
        for measure in MEASURES:
            assert got[qid][measure] == pytest.approx(values[measure], abs=1e-9), (qid, measure)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [1, 2])
def test_compute_from_lists_agrees_with_pytrec_eval(seed, level):
    from ci_eval.core.measure.metrics import compute
    from ci_eval.core.measure.trec_order import order

    qrels, run = random_case(seed)
    run = {q: r for q, r in run.items() if r}
    expected = pytrec_eval.RelevanceEvaluator(qrels, TREC_PARAMS, relevance_level=level).evaluate(run)
    qids = sorted(expected)
    values = compute(list(MEASURES.values()), [order(run[q].items()).ids for q in qids],
                     [qrels[q] for q in qids], level)
    for row, qid in enumerate(qids):
        for measure, ours_name in MEASURES.items():
            assert values[ours_name][row] == pytest.approx(expected[qid][measure], abs=1e-9), \
                (qid, measure)
