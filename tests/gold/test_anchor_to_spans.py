"""`ci-eval gold anchor --to-spans` on real files: id gold becomes span gold where the
manifest places the chunk, through the one gold-set writer (the file keeps its layout),
and the converted gold resolves back to the judgements the ids gave."""

from __future__ import annotations

import json
from pathlib import Path

from gold_cli import gold

from ci_eval.core.gold.evidence import resolve
from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.inputs.manifest import read_manifest

DOC = "".join(f"Sentence {n} says something about part {n % 7}. " for n in range(40))
SIZE, OVERLAP = 120, 30  # overlap below half a chunk: each chunk resolves back to itself


def _project(tmp_path: Path, overlap: int = OVERLAP) -> dict:
    starts = range(0, len(DOC), SIZE - overlap)
    chunks = [{"id": f"k{(31 * n) % 97:02d}", "doc": "notes.txt", "start": s, "end": min(s + SIZE, len(DOC)),
               "text": DOC[s:s + SIZE]} for n, s in enumerate(starts)]
    chunks.append({"id": "bare"})  # no span: stays an id
    (tmp_path / "index.jsonl").write_text("\n".join(map(json.dumps, [{"version": "v1"}, *chunks])) + "\n")
    ids = [c["id"] for c in chunks]
    # laid out by hand, two-space indent and a key order of its own: the layout is kept
    doc = {"questions": [
        {"question": "one?", "id": "q1", "gold": {ids[2]: 2, ids[3]: 1, "bare": 1}},
        {"question": "two?", "id": "q2", "gold": [ids[5]], "tags": ["faq"]},
        {"question": "three?", "id": "q3", "gold": ["gone"]}], "schema_version": 1}
    (tmp_path / "gold.json").write_text(json.dumps(doc, indent=2) + "\n")
    return {c["id"]: c for c in chunks}


def test_ids_become_spans_where_the_manifest_places_them_and_resolve_back_to_the_same_judgements(tmp_path):
    chunks = _project(tmp_path)
    before = parse_gold_set(json.loads((tmp_path / "gold.json").read_text()), "gold.json")
    r = gold("anchor", "--gold", "gold.json", "--manifest", "index.jsonl", "--to-spans", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "gold.json: 3 gold id(s) turned into document spans in 2 question(s); 2 left as ids" in r.stdout
    assert "resolve to other chunk judgements" not in r.stdout
    text = (tmp_path / "gold.json").read_text()
    doc = json.loads(text)
    q1, q2, q3 = doc["questions"]
    c2, c3, c5 = (chunks[cid] for cid in (list(chunks)[n] for n in (2, 3, 5)))
    assert q1["gold"] == {"bare": 1} and q1["evidence"] == [
        {"doc": "notes.txt", "start": c2["start"], "end": c2["end"], "grade": 2},
        {"doc": "notes.txt", "start": c3["start"], "end": c3["end"], "grade": 1}]
    assert q2["gold"] == [] and q2["evidence"] == [{"doc": "notes.txt", "start": c5["start"], "end": c5["end"],
                                                    "grade": 1}]
    assert q3 == {"question": "three?", "id": "q3", "gold": ["gone"]}
    assert text.startswith('{\n  "questions": [\n    {\n      "question": "one?",')  # its own layout kept
    after = resolve(parse_gold_set(doc, "gold.json"), read_manifest(tmp_path / "index.jsonl"), "gold.json").gold
    # the same relevant judgements; resolving also judges the documents' other chunks grade 0
    relevant = [{cid: g for cid, g in q.gold if g > 0} for q in after.questions]
    assert relevant == [dict(q.gold) for q in before.questions]


def test_chunks_overlapping_by_half_or_more_are_said_to_widen_the_judgements(tmp_path):
    _project(tmp_path, overlap=SIZE // 2)
    r = gold("anchor", "--gold", "gold.json", "--manifest", "index.jsonl", "--to-spans", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "2 question(s) resolve to other chunk judgements than their ids gave" in r.stdout
