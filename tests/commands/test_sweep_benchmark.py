"""The sweep benchmark (benchmarks/bench_sweep.py) on both shared collections, checked
here: every value of `ci-eval sweep`'s table equals pytrec_eval on the resolved qrels and
the rankings the rows recorded; the rename-only re-chunk PR gets "No change"; the PR with a
planted loss of evidence on 10 % of the questions regresses exactly those questions."""

from __future__ import annotations

import json
import re
import sys

import pytest
import tomllib
from run_files import read_run
from suite_paths import REPO_ROOT

pytrec_eval = pytest.importorskip("pytrec_eval")
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import bench_sweep  # noqa: E402

TREC = {"recall@5": "recall_5", "mrr": "recip_rank"}


@pytest.fixture(scope="module", params=["cranfield", "vaswani_npl"])
def swept(request, tmp_path_factory):
    from suite_paths import SHARED

    if not SHARED.is_dir():
        pytest.skip("reference data ../shared is absent beside the checkout")
    collection = bench_sweep.load(request.param, SHARED / "collections")
    folder = tmp_path_factory.mktemp(request.param)
    paths = bench_sweep.configs(collection, folder)
    table = json.loads(bench_sweep.sweep(folder, paths, "json").stdout)
    return collection, folder, paths, table


def _pytrec_means(folder, config_path, ids) -> dict:
    """pytrec_eval's recall@5 and reciprocal rank over the row's recorded rankings, against
    the resolved qrels (the row's gold set), averaged over the table's questions."""
    gold_file = tomllib.loads(config_path.read_text())["gold_set"]
    gold = {q["id"]: q["gold"] for q in json.loads((folder / gold_file).read_text())["questions"]}
    row = next(p for p in (folder / "rows").glob("row-*.json")
               if read_run(p)["config"]["sweep"]["label"] == config_path.stem)
    run = {q["id"]: {r["id"]: r["score"] for r in q["ranking"]} for q in read_run(row)["questions"]}
    qrels = {qid: {cid: int(g) for cid, g in gold[qid].items()} for qid in ids}
    scores = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values())).evaluate({q: run[q] for q in ids})
    # a question the run returned nothing for is absent from pytrec_eval's answer: it scores 0
    return {m: sum(scores.get(q, {}).get(t, 0.0) for q in ids) / len(ids) for m, t in TREC.items()}


def test_every_value_of_the_table_is_pytrec_eval_on_the_resolved_qrels(swept):
    collection, folder, paths, table = swept
    assert [r["label"] for r in table["rows"]] == [p.stem for p in paths]
    judged = [f"q{q}" for q in collection.queries if collection.qrels.get(q)]
    # every judged question is measured at every chunking (each has a relevant document)
    assert table["questions"] == len(judged) and table["left_out"] == 0
    first = {**_pytrec_means(folder, paths[0], judged), **_evidence_means(collection, folder, paths[0], judged)}
    for row, path in zip(table["rows"], paths):
        expected = {**_pytrec_means(folder, path, judged), **_evidence_means(collection, folder, path, judged)}
        assert set(row["means"]) == set(expected) == set(bench_sweep.HEADLINE)
        assert row["means"] == pytest.approx(expected, abs=1e-12)
        for m, t in row["against_row_1"].items():
            assert t["delta"] == pytest.approx(expected[m] - first[m], abs=1e-9)
            assert t["family"] == _family(len(paths), table)


def _family(rows: int, table: dict) -> int:
    """The one Holm family: each row against the one before and against row 1 on every
    metric (a pair of rows once), and the best row against every other on the deciding
    metric where that pair is not already tested."""
    pairs = {(i - 1, i) for i in range(1, rows)} | {(0, i) for i in range(1, rows)}
    size = len(pairs) * len(bench_sweep.HEADLINE)
    if table["best"] is not None:
        top = table["best"]["top"] - 1
        size += sum(1 for j in range(rows) if j != top and (min(j, top), max(j, top)) not in pairs)
    return size


def _evidence_means(collection, folder, config_path, ids) -> dict:
    """evidence_recall@5 and evidence_precision@5 by a direct count of characters: the
    evidence is each relevant document whole, at its grade; the top 5 chunks cover the
    union of their [start, end) within their documents."""
    manifest = folder / tomllib.loads(config_path.read_text())["index"]["manifest"]
    where = {e["id"]: (e["doc"], e["start"], e["end"]) for e in map(json.loads, manifest.read_text().splitlines()[1:])}
    row = next(p for p in (folder / "rows").glob("row-*.json")
               if read_run(p)["config"]["sweep"]["label"] == config_path.stem)
    ranked = {q["id"]: [r["id"] for r in q["ranking"]][:5] for q in read_run(row)["questions"]}
    recall = precision = 0.0
    for qid in ids:
        grades = collection.qrels[qid[1:]]
        covered: dict[str, set] = {}
        for cid in ranked[qid]:
            doc, start, end = where[cid]
            covered.setdefault(doc, set()).update(range(start, end))
        held = sum(grades.get(doc, 0) * len(chars) for doc, chars in covered.items())
        whole = sum(grade * len(collection.docs[doc]) for doc, grade in grades.items())
        evidence = sum(len(chars) for doc, chars in covered.items() if doc in grades)
        recall += held / whole
        precision += evidence / sum(map(len, covered.values())) if covered else 0.0
    return {"evidence_recall@5": recall / len(ids), "evidence_precision@5": precision / len(ids)}


def test_the_ids_carry_no_information_and_the_chunks_overlap(swept):
    _, folder, _, _ = swept
    lines = [json.loads(x) for x in (folder / "index-c500.jsonl").read_text().splitlines()[1:]]
    # random hex, in no order of the documents or of the text
    assert all(re.fullmatch(r"k[0-9a-f]{7}", e["id"]) for e in lines)
    ids = [e["id"] for e in lines]
    assert ids != sorted(ids) and len(set(ids)) == len(ids)
    same_doc = [(a, b) for a, b in zip(lines, lines[1:]) if a["doc"] == b["doc"]]
    assert same_doc and all(b["start"] < a["end"] for a, b in same_doc)


@pytest.fixture(scope="module", params=["cranfield", "vaswani_npl"])
def prs(request, tmp_path_factory):
    from suite_paths import SHARED

    if not SHARED.is_dir():
        pytest.skip("reference data ../shared is absent beside the checkout")
    collection = bench_sweep.load(request.param, SHARED / "collections")
    return collection, bench_sweep.rechunk_prs(collection, tmp_path_factory.mktemp(f"{request.param}-pr"))


def test_a_rename_only_rechunk_is_no_change_and_a_planted_loss_names_its_questions(prs):
    collection, result = prs
    rename, lost, planted = result["rename"], result["lost"], result["planted"]
    judged = sum(1 for q in collection.queries if collection.qrels.get(q))
    assert rename["passed"] and rename["compared"] == judged and rename["regressions"] == []
    assert rename["comment"].splitlines()[1].startswith("### ✅ No change")
    assert rename["gold_set"]["relabelled"] == {} and rename["gold_set"]["rechunk"]["questions"] == judged
    assert len(planted) == round(0.10 * judged)
    assert sorted(q["id"] for q in lost["regressions"]) == planted
    assert not lost["passed"]
    assert f"#### Regressions ({len(planted)})" in lost["comment"]
