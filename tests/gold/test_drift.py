"""Gold ids that still exist but name other text (drifted): positional ids (``doc#0`` ...)
after a chunk-size change, through `gold anchor`, `check`, `run`, `compare` and `gold remap`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from run_files import read_run

SENTENCES = [f"Sentence {i} says {w} about the {w} topic." for i, w in
             enumerate(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot",
                        "golf", "hotel", "india", "juliet", "kilo", "lima"])]
FAQ = [f"Question {w} has its own answer on {w}." for w in ["red", "green", "blue", "cyan", "pink", "gray"]]


def positional(doc: str, sentences: list[str], size: int) -> list[dict]:
    """A splitter that names chunks by position (``doc#n``), as LlamaIndex's and
    LangChain's index ids do: the text each id names depends on the chunk size."""
    return [{"id": f"{doc}#{n}", "doc": doc, "text": " ".join(sentences[i:i + size])}
            for n, i in enumerate(range(0, len(sentences), size))]


def write_manifest(path: Path, version: str, size: int) -> list[dict]:
    chunks = positional("guide", SENTENCES, size) + positional("faq", FAQ, 1)
    path.write_text("\n".join([json.dumps({"version": version}), *map(json.dumps, chunks)]) + "\n")
    return chunks


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=120, check=False)


def configure(root: Path, manifest: str) -> None:
    (root / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "run-file"\n'
                                       f'path = "run.jsonl"\n[index]\nmanifest = "{manifest}"\n')


def project(root: Path) -> tuple[list[dict], list[dict]]:
    """Gold on the guide's six two-sentence chunks and on six FAQ chunks; the guide then
    re-cut into three-sentence chunks: guide#0..3 keep their ids with other text (drifted),
    guide#4 and guide#5 are gone (missing). Each question's run answers its own gold id
    first, so the drifted ones would read as hits."""
    old, new = write_manifest(root / "old.jsonl", "v1", 2), write_manifest(root / "new.jsonl", "v2", 3)
    gold = [f"guide#{n}" for n in range(6)] + [f"faq#{n}" for n in range(6)]
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": f"q{i}", "question": f"question {i}", "gold": [g]} for i, g in enumerate(gold)]}))
    (root / "run.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "results": [[g, 1.0]]}) + "\n"
                                            for i, g in enumerate(gold)))
    return old, new


DRIFTED = ["guide#0", "guide#1", "guide#2", "guide#3"]
MISSING = ["guide#4", "guide#5"]


def _base_then_head(tmp_path: Path):
    old, new = project(tmp_path)
    anchored = cli("gold", "anchor", "--gold", "gold.json", "--manifest", "old.jsonl", cwd=tmp_path)
    assert anchored.returncode == 0, anchored.stderr
    configure(tmp_path, "old.jsonl")
    base = cli("run", "--out", "base.json", "--quiet", cwd=tmp_path)
    assert base.returncode == 0, base.stderr
    configure(tmp_path, "new.jsonl")
    return old, new


def test_the_expected_drift_is_what_the_chunk_size_change_did(tmp_path):
    # the premise, derived from the two manifests rather than assumed
    old, new = project(tmp_path)
    old_text, new_text = ({c["id"]: c["text"] for c in m} for m in (old, new))
    assert sorted(i for i in old_text if i in new_text and old_text[i] != new_text[i]) == DRIFTED
    assert sorted(i for i in old_text if i not in new_text) == MISSING


def test_check_reports_drifted_ids_apart_from_missing_ones(tmp_path):
    _base_then_head(tmp_path)
    out = cli("check", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    for i, cid in enumerate(DRIFTED):
        assert (f"gold.json: question 'q{i}': drifted gold id(s) (in the index, but their text no longer "
                f"matches the anchor): {cid}") in lines
    assert "gold.json: question 'q4': stale gold id(s): guide#4" in lines
    assert f"{len(DRIFTED)} gold id(s) drifted: kept out of the comparison like missing ones" in lines
    assert f"{len(DRIFTED) + len(MISSING)} distinct stale gold id(s) in 6 question(s)" in lines


def test_check_without_anchors_says_drift_cannot_be_seen(tmp_path):
    project(tmp_path)
    configure(tmp_path, "new.jsonl")
    out = cli("check", cwd=tmp_path)
    assert out.returncode == 1, out.stderr  # only the missing ones can be seen
    assert ("gold.json: no anchors, so a gold id that still exists but names other text (drifted) cannot "
            "be seen: run 'ci-eval gold anchor' to record the text each id names") in out.stdout
    assert "drifted gold id" not in out.stdout and "2 distinct stale gold id(s)" in out.stdout


def test_run_and_compare_keep_drifted_ids_out_of_the_comparison(tmp_path):
    _base_then_head(tmp_path)
    head_run = cli("run", "--out", "head.json", cwd=tmp_path)
    assert head_run.returncode == 0, head_run.stderr
    head = read_run(tmp_path / "head.json")
    assert head["index"]["drifted"] == DRIFTED
    status = {q["id"]: q["status"] for q in head["questions"]}
    assert [status[f"q{i}"] for i in range(6)] == ["stale"] * 6  # drifted and missing alike
    assert [status[f"q{i}"] for i in range(6, 12)] == ["ok"] * 6
    # the means are over the six FAQ questions only, each a hit
    assert head["summary"]["overall"]["count"] == 6 and head["summary"]["overall"]["means"]["hit@1"] == 1.0
    assert "drifted (4 still in it, naming other text than their anchor)" in head_run.stderr + head_run.stdout

    shown = cli("compare", "base.json", "head.json", "--no-config", "--format", "json", cwd=tmp_path)
    report = json.loads(shown.stdout)
    assert report["compared"] == 6  # the FAQ questions: none of the guide's
    comment = cli("compare", "base.json", "head.json", "--no-config", cwd=tmp_path).stdout
    assert "4 of these ids drifted" in comment
    for cid in DRIFTED:
        assert f"`{cid}` (drifted)" in comment
    for cid in MISSING:
        assert f"`{cid}`" in comment and f"`{cid}` (drifted)" not in comment

    from ci_eval.github.steps import stale_annotations

    notes = stale_annotations(head, None)
    assert any("drifted gold id(s), in the index but naming other text than their anchor: guide#1" in n
               for n in notes)
    assert any("stale gold id(s) not in the current index: guide#5" in n for n in notes)


def test_gold_remap_offers_drifted_ids_a_new_id(tmp_path):
    _base_then_head(tmp_path)
    out = cli("gold", "remap", "--gold", "gold.json", "--manifest", "new.jsonl", cwd=tmp_path)
    for cid in DRIFTED + MISSING:
        assert any(line.split()[:1] == [cid] for line in out.stdout.splitlines()), (cid, out.stdout)
