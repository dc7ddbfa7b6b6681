"""Span gold through the real CLI: `ci-eval run` resolves the evidence against the manifest,
the artefact records the resolved chunk judgements (pytrec_eval on them gives every classic
metric the run wrote), the evidence metrics equal a direct character count, and a manifest
that cannot place the evidence is exit 2 with nothing written."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from suite_paths import REPO_ROOT

DOCS = {name: "".join(random.Random(n).choice("abcdefgh ijkl") for _ in range(1500))
        for n, name in enumerate(("guide.md", "faq.md"))}
K = 5
CLASSIC = {"recall@5": "recall_5", "precision@5": "P_5", "ndcg@5": "ndcg_cut_5", "hit@5": "success_5",
           "mrr": "recip_rank", "map": "map", "recall@15": "recall_15"}
EVIDENCE = ("evidence_recall@5", "evidence_recall@15", "evidence_precision@5")


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ci_eval", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"})


def _chunks(size: int, overlap: int) -> list[dict]:
    """Every document cut into ``size`` characters with ``overlap``, ids that say nothing."""
    entries = []
    for doc, text in DOCS.items():
        for start in range(0, len(text), size - overlap):
            entries.append({"doc": doc, "start": start, "end": min(start + size, len(text)),
                            "text": text[start:start + size]})
    names = random.Random(size).sample(range(100_000), len(entries))
    return [{"id": f"n{name:05d}", **e} for name, e in zip(names, entries)]


QUOTE = DOCS["faq.md"][610:660]
QUESTIONS = [
    {"id": "q1", "question": "span?", "gold": [],
     "evidence": [{"doc": "guide.md", "start": 120, "end": 530, "grade": 2},
                  {"doc": "guide.md", "start": 500, "end": 560, "grade": 1}]},
    {"id": "q2", "question": "quote?", "gold": [], "evidence": [{"doc": "faq.md", "quote": QUOTE, "grade": 3}]},
    {"id": "q3", "question": "both?", "gold": {"n-extra": 1},
     "evidence": [{"doc": "faq.md", "start": 1000, "end": 1400}, {"doc": "guide.md", "start": 40, "end": 90}]},
    {"id": "q4", "question": "stale?", "gold": [], "evidence": [{"doc": "faq.md", "quote": "not in any document"}]},
]


def _project(folder: Path, size: int, overlap: int, seed: int) -> list[dict]:
    folder.mkdir()
    # a chunk of a document no evidence names, judged by its id
    chunks = [*_chunks(size, overlap), {"id": "n-extra", "doc": "other.md", "start": 0, "end": 10}]
    (folder / "index.jsonl").write_text("\n".join(map(json.dumps, [{"version": f"c{size}"}, *chunks])) + "\n")
    rng = random.Random(seed)
    ids = [c["id"] for c in chunks]
    (folder / "run.jsonl").write_text("".join(
        json.dumps({"id": q["id"], "results": [[cid, 20.0 - r] for r, cid in enumerate(rng.sample(ids, min(15, len(ids))))]}) + "\n"
        for q in QUESTIONS))
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": QUESTIONS}, indent=2))
    metrics = json.dumps([*CLASSIC, *EVIDENCE])
    (folder / "ci-eval.toml").write_text(f'gold_set = "gold.json"\nk = {K}\nmetrics = {metrics}\n'
                                         '[retriever]\ntype = "run-file"\npath = "run.jsonl"\n'
                                         '[index]\nmanifest = "index.jsonl"\n')
    return chunks


def _rows(artefact: Path) -> dict:
    data = json.loads(artefact.read_text())
    fields = data["question_fields"]
    return data["metrics"], {row[0]: dict(zip(fields, row)) for row in data["questions"]}


def _evidence_chars(question: dict) -> dict:
    """Each evidence character's grade (the highest where pieces overlap), counted here."""
    out: dict = {}
    for e in question["evidence"]:
        start = e["start"] if "start" in e else DOCS[e["doc"]].find(e["quote"])
        if start < 0:
            continue
        end = e["end"] if "end" in e else start + len(e["quote"])
        for c in range(start, end):
            out[(e["doc"], c)] = max(out.get((e["doc"], c), 0), e.get("grade", 1))
    return out


@pytest.mark.parametrize("size,overlap", [(200, 0), (300, 50), (700, 100)])
def test_the_resolved_judgements_give_every_classic_metric_and_the_evidence_metrics_count_characters(
        tmp_path, size, overlap):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    chunks = _project(tmp_path / "p", size, overlap, seed=size)
    r = _cli("run", "--out", "run.json", "--quiet", cwd=tmp_path / "p")
    assert r.returncode == 0, r.stdout + r.stderr
    names, rows = _rows(tmp_path / "p" / "run.json")
    assert rows["q4"]["status"] == "stale" and rows["q4"]["stale"] == ["evidence:faq.md:'not in any document'"]
    measured = {qid: row for qid, row in rows.items() if row["status"] == "ok"}
    assert set(measured) == {"q1", "q2", "q3"}
    # the resolved judgements, as the rule states them, counted character by character here
    for q in QUESTIONS[:3]:
        grades = dict(q["gold"]) if isinstance(q["gold"], dict) else {}
        for c in chunks:
            mine = set(range(c["start"], c["end"]))
            for e in q["evidence"]:
                if c["doc"] != e["doc"]:
                    continue
                piece = {ch for d, ch in _evidence_chars({"evidence": [e]}) if d == c["doc"]}
                shared = len(piece & mine)
                if shared and (shared >= len(piece) / 2 or shared >= len(mine) / 2):
                    grades[c["id"]] = max(grades.get(c["id"], 0), e.get("grade", 1))
        # every other chunk of a document the evidence names is judged not relevant
        named = {e["doc"] for e in q["evidence"]}
        for c in chunks:
            if c["doc"] in named:
                grades.setdefault(c["id"], 0)
        assert dict(map(tuple, measured[q["id"]]["gold"])) == grades, q["id"]
    qrels = {qid: {cid: int(g) for cid, g in row["gold"]} for qid, row in measured.items()}
    run = {qid: {cid: float(score) for cid, score in row["ranking"]} for qid, row in measured.items()}
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"recall.5,15", "P.5", "ndcg_cut.5", "success.5", "recip_rank",
                                                  "map"}).evaluate(run)
    spans = {c["id"]: (c["doc"], c["start"], c["end"]) for c in chunks}
    for qid, row in measured.items():
        values = dict(zip(names, row["metrics"]))
        for ours, theirs in CLASSIC.items():
            assert values[ours] == pytest.approx(trec[qid][theirs], abs=1e-12), (qid, ours)
        evidence = _evidence_chars(next(q for q in QUESTIONS if q["id"] == qid))
        for k in (5, 15):
            covered = {(spans[cid][0], ch) for cid, _ in row["ranking"][:k] if cid in spans
                       for ch in range(spans[cid][1], spans[cid][2])}
            expected = sum(g for ch, g in evidence.items() if ch in covered) / sum(evidence.values())
            assert values[f"evidence_recall@{k}"] == pytest.approx(expected), (qid, k)
            if k == 5:
                assert values["evidence_precision@5"] == pytest.approx(len(covered & evidence.keys()) / len(covered))


def test_span_gold_against_a_manifest_without_spans_is_exit_2_naming_it_and_writes_nothing(tmp_path):
    project = tmp_path / "p"
    _project(project, 200, 0, seed=1)
    (project / "index.jsonl").write_text("\n".join(json.dumps({"id": c["id"]}) for c in _chunks(200, 0)) + "\n")
    r = _cli("run", "--out", "run.json", "--quiet", cwd=project)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "index.jsonl:chunks: span gold needs doc, start and end for each chunk" in r.stderr
    assert "Traceback" not in r.stderr and not (project / "run.json").exists()
    checked = _cli("check", cwd=project)
    assert checked.returncode == 2 and "index.jsonl:chunks: span gold needs" in checked.stderr


def test_check_reports_a_quote_no_longer_in_the_documents_as_stale(tmp_path):
    _project(tmp_path / "p", 300, 50, seed=2)
    r = _cli("check", cwd=tmp_path / "p")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "gold.json: question 'q4': stale gold id(s): evidence:faq.md:'not in any document'" in r.stdout


def test_an_evidence_metric_without_span_gold_is_exit_2_at_its_place(tmp_path):
    project = tmp_path / "p"
    _project(project, 200, 0, seed=1)
    (project / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": "q1", "question": "?", "gold": ["n-extra"]}]}))
    r = _cli("run", "--out", "run.json", "--quiet", cwd=project)
    assert r.returncode == 2 and "ci-eval.toml:metrics[7]: evidence_recall@5 is measured on evidence" in r.stderr


def _side(folder: Path, version: str, size: int, lose: tuple = ()) -> None:
    """A branch whose index cuts the documents into ``size`` characters (ids renamed with the
    seed), its retriever ranking each question's evidence chunks first unless in ``lose``."""
    folder.mkdir()
    chunks = _chunks(size, 0)
    names = random.Random(version).sample(range(100_000), len(chunks))
    chunks = [{**c, "id": f"{version}-{name}"} for c, name in zip(chunks, names)]
    (folder / "index.jsonl").write_text("\n".join(map(json.dumps, [{"version": version}, *chunks])) + "\n")
    lines = []
    for n in range(12):
        doc, start = ("guide.md", "faq.md")[n % 2], 100 * n
        hit = [c["id"] for c in chunks if c["doc"] == doc and c["start"] < start + 90 and c["end"] > start]
        other = [c["id"] for c in chunks if c["doc"] != doc][:4]
        ranking = other if f"s{n}" in lose else hit + other
        lines.append(json.dumps({"id": f"s{n}", "results": [[cid, 20.0 - r] for r, cid in enumerate(ranking)]}))
    (folder / "run.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": f"s{n}", "question": f"where is passage {n}?", "gold": [],
         "evidence": [{"doc": ("guide.md", "faq.md")[n % 2], "start": 100 * n, "end": 100 * n + 90}]}
        for n in range(12)]}))
    (folder / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 3\nmetrics = ["evidence_recall@3", "mrr", '
                                         '"recall@3"]\n[retriever]\ntype = "run-file"\npath = "run.jsonl"\n'
                                         '[index]\nmanifest = "index.jsonl"\n')
    r = _cli("run", "--out", "run.json", "--quiet", cwd=folder)
    assert r.returncode == 0, r.stdout + r.stderr


def _compare(tmp_path: Path, fmt: str) -> subprocess.CompletedProcess:
    return _cli("compare", tmp_path / "base" / "run.json", tmp_path / "head" / "run.json", "--no-config",
                "--max-drop", "evidence_recall@3=0.05", "--format", fmt, cwd=tmp_path)


def test_a_rename_only_rechunk_of_span_gold_gives_no_change(tmp_path):
    _side(tmp_path / "base", "v1", 50)
    _side(tmp_path / "head", "v2", 50)
    r = _compare(tmp_path, "markdown")
    assert r.returncode == 0, r.stdout + r.stderr
    verdict, baseline = r.stdout.splitlines()[1:3]
    assert verdict.startswith("### ✅ No change: every metric of all 12 compared questions is as before")
    assert "12 questions compared across a re-chunk (index `v1` → `v2`; 12 questions through their span gold)" \
        in baseline
    report = json.loads(_compare(tmp_path, "json").stdout)
    assert report["gold_set"]["relabelled"] == {} and report["gold_set"]["rechunk"]["span_gold"] == 12


def test_a_rechunk_of_span_gold_that_loses_evidence_regresses_exactly_those_questions(tmp_path):
    lost = ("s3", "s8")
    _side(tmp_path / "base", "v1", 50)
    _side(tmp_path / "head", "v2", 150, lose=lost)
    report = json.loads(_compare(tmp_path, "json").stdout)
    assert report["compared"] == 12 and report["gold_set"]["relabelled"] == {}
    assert sorted(q["id"] for q in report["regressions"]) == sorted(lost)


def test_a_sharded_span_gold_run_merges_to_the_whole_run(tmp_path):
    project = tmp_path / "p"
    _project(project, 300, 50, seed=4)
    whole = _cli("run", "--out", "whole.json", "--quiet", cwd=project)
    assert whole.returncode == 0, whole.stderr
    for n in (1, 2):
        part = _cli("run", "--quiet", "--shard", f"{n}/2", "--out", f"part{n}.json", cwd=project)
        assert part.returncode == 0, part.stderr
    merged = _cli("merge", "part1.json", "part2.json", "--out", "merged.json", cwd=project)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    _, rows = _rows(project / "merged.json")
    _, expected = _rows(project / "whole.json")
    assert {q: r["metrics"] for q, r in rows.items()} == {q: r["metrics"] for q, r in expected.items()}
