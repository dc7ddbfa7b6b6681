"""`ci-eval sweep` over rows that are different indexes, as the seeds' ladder: one grid key
cuts the index (the manifest callable's [index] params) and reaches the retriever, each row
is scored on its own index, the best row is decided on the evidence (which compares
chunkings) and a row that searched another index stops loudly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from projects import cli, write_gold, write_module
from run_files import read_run

N = 20  # questions, one per document d0..d19; documents d20.. are never asked about
DOCS = 40
LENGTH = 400
K = 2

CORPUS = f'''
DOCS, LENGTH = {DOCS}, {LENGTH}
SIZES = {{"fixed": 100, "heading": 200}}


def text(d):
    return ("doc " + str(d) + " ") * 100


def chunks(chunking="fixed"):
    """The index cut by ``chunking``: fixed 100-character windows or 200-character sections."""
    size, out = SIZES[chunking], []
    for d in range(DOCS):
        body = text(d)[:LENGTH]
        for j, start in enumerate(range(0, LENGTH, size)):
            out.append({{"id": f"d{{d}}-{{chunking[0]}}{{j}}", "doc": f"d{{d}}.md", "start": start,
                         "end": start + size, "text": body[start:start + size]}})
    return {{"version": "cut-" + chunking, "chunks": out}}


def ranking(chunking, n, depth):
    """Question n's ids: the first chunk of its document at rank 1 (fixed) or at rank 1 for
    an even n and 2 for an odd one (heading), the rest chunks of documents no one asks about."""
    tag = chunking[0]
    others = [f"d{{20 + j}}-{{tag}}0" for j in range(depth)]
    mine = f"d{{n}}-{{tag}}0"
    at = 1 if chunking == "fixed" or n % 2 == 0 else 2
    ids = others[:at - 1] + [mine] + others[at - 1:]
    return ids[:depth]


def search(question, depth, chunking="fixed"):
    n = int(question.split()[-1])
    return [(cid, 100.0 - j) for j, cid in enumerate(ranking(chunking, n, depth))]


def stubborn(question, depth, chunking="fixed"):
    """A retriever that reads the index it was built on, whatever the row says."""
    return search(question, depth)
'''


def _config(folder: Path, target: str = "corpus:search") -> None:
    (folder / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = {K}\n\n[index]\ncallable = "corpus:chunks"\n'
        f'params = {{ chunking = "fixed" }}\n\n[retriever]\ntype = "python"\ntarget = "{target}"\ndepth = 6\n')


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_module(tmp_path, "corpus", CORPUS)
    # each question's evidence is the first 200 characters of its document: two fixed
    # chunks (each inside it: all of the chunk) or one heading chunk (all of it)
    write_gold(tmp_path, [{"id": f"q{n}", "question": f"question {n}", "gold": [],
                           "evidence": [{"doc": f"d{n}.md", "start": 0, "end": 200}]} for n in range(N)])
    _config(tmp_path)
    return tmp_path


def _expected(chunking: str) -> dict:
    """The rows' means by counting over the corpus's own rule and the resolution rule."""
    size = {"fixed": 100, "heading": 200}[chunking]
    relevant = 200 // size  # chunks lying inside the 200 evidence characters
    recall, rr, ev_recall, ev_precision = [], [], [], []
    for n in range(N):
        at = 1 if chunking == "fixed" or n % 2 == 0 else 2
        in_top = 1 if at <= K else 0
        recall.append(in_top / relevant)
        rr.append(1 / at)
        ev_recall.append(in_top * size / 200)  # one chunk of the evidence in the top K
        ev_precision.append(in_top * size / (K * size))  # the top K cover K chunks of text
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    return {f"recall@{K}": mean(recall), "mrr": mean(rr), f"evidence_recall@{K}": mean(ev_recall),
            f"evidence_precision@{K}": mean(ev_precision)}


def test_one_grid_key_cuts_the_index_and_searches_it_each_row_on_its_own_index(project):
    done = cli("sweep", "--grid", "chunking=fixed,heading", "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    # the default columns: the seeds' two, and the evidence metrics of a span gold set
    assert data["metrics"] == [f"recall@{K}", "mrr", f"evidence_recall@{K}", f"evidence_precision@{K}"]
    for row, chunking in zip(data["rows"], ("fixed", "heading")):
        assert row["means"] == pytest.approx(_expected(chunking)), chunking
        assert row["notes"] == []
    # each row's artefact records the index it was scored on
    recorded = [read_run(project / "ci-eval-sweep" / f"row-0{i}.json") for i in (1, 2)]
    assert [r["index"]["version"] for r in recorded] == ["cut-fixed", "cut-heading"]
    assert "id(s) not in the index" not in done.stderr


def test_across_chunkings_the_best_row_is_decided_on_the_evidence(project):
    # MRR puts the fixed chunks first (1 against 0.75); the evidence, the heading chunks
    done = cli("sweep", "--grid", "chunking=fixed,heading", "--metrics", f"mrr,evidence_recall@{K}",
               cwd=project)
    assert done.returncode == 0, done.stderr
    fixed, heading = _expected("fixed"), _expected("heading")
    assert fixed["mrr"] > heading["mrr"] and heading[f"evidence_recall@{K}"] > fixed[f"evidence_recall@{K}"]
    assert "**Best: row 2, chunking=heading**" in done.stdout
    assert f"on evidence\\_recall@{K}" in done.stdout and "decided on the evidence" in done.stdout


def test_across_chunkings_chunk_level_metrics_alone_rank_nothing_and_say_why(project):
    done = cli("sweep", "--grid", "chunking=fixed,heading", "--metrics", "mrr", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "Best:" not in done.stdout
    assert "chunk-level metrics (recall@k, MRR, nDCG) cannot rank chunkings" in done.stdout


def test_a_row_that_answers_from_another_index_stops_loudly_naming_the_row(project):
    _config(project, "corpus:stubborn")
    done = cli("sweep", "--grid", "chunking=fixed,heading", cwd=project)
    assert done.returncode == 4, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    # every one of row 2's 20 x 6 ids is a fixed chunk id, none of them in the heading index
    assert last.startswith("ci-eval: error: row 2 (chunking=heading): ")
    assert f"{N * 6} of the {N * 6} ids it returned are not in its index" in last
    assert "row 2: warning: 20 question(s): id(s) not in the index" in done.stderr
    assert done.stdout == ""  # no table that reads zeros as a result


def test_a_grid_key_no_config_can_vary_is_exit_2_with_the_list(project):
    done = cli("sweep", "--grid", "chunk_size=256,512", cwd=project)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "'chunk_size' is not something ci-eval.toml can vary" in line
    assert "[index] params (chunking)" in line and "index.params.NAME or params.NAME adds a new one" in line
    assert not (project / "ci-eval-sweep").exists()


def test_an_index_manifest_on_the_grid_is_the_index_s_file(project):
    (project / "a.json").write_text(json.dumps({"version": "a", "ids": ["x"]}))
    (project / "files.toml").write_text(f'gold_set = "gold.json"\nk = {K}\n\n[index]\nmanifest = "a.json"\n\n'
                                        '[retriever]\ntype = "python"\ntarget = "corpus:search"\n')
    grid = ("--config", "files.toml", "--grid", "index.manifest=a.json,missing.json")
    listed = cli("sweep", *grid, "--list", cwd=project)
    assert listed.stdout.splitlines() == ["1\tindex.manifest=a.json", "2\tindex.manifest=missing.json"]
    run = cli("sweep", *grid, cwd=project)
    assert run.returncode == 2 and "missing.json" in run.stderr and "Traceback" not in run.stderr
    assert not (project / "ci-eval-sweep").exists()
