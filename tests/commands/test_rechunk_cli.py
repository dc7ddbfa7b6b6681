"""A verdict across a re-chunk, through the real CLI: a base branch and a head branch
whose index renames every chunk id (same text; one chunk's text lightly edited), the
head's gold set rewritten by `ci-eval gold remap --write --accept-proposals`, each side
run by `ci-eval run`, then `ci-eval compare`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from suite_paths import REPO_ROOT

QUESTIONS = 12
EDITED = "d5-b"  # its text changes by one word: a proposal, accepted by a person
WORDS = ("lift drag thrust wing flap rudder aileron spar rib skin engine intake nozzle fuel "
         "tank gear brake strut cabin seat door window panel gauge pitot static vane slat").split()


def _text(doc: int, part: str) -> str:
    # forty words, distinct per chunk, so every text hash and signature is its own
    start = (7 * doc + (0 if part == "a" else 13)) % len(WORDS)
    body = " ".join(WORDS[(start + i) % len(WORDS)] + str(doc) + part for i in range(40))
    return f"Section {doc}{part}. {body}."


OLD = {f"d{n}-{p}": (f"doc{n}", _text(n, p)) for n in range(QUESTIONS) for p in "ab"}
# every id renamed, to ids that carry no information (a permutation of a counter)
RENAMED = {old: f"c{(17 * i + 5) % len(OLD):03d}" for i, old in enumerate(sorted(OLD))}


def _new_text(old: str) -> str:
    text = OLD[old][1]
    return text.replace("Section", "Part", 1) if old == EDITED else text


def _gold(n: int) -> dict:
    return {f"d{n}-a": 2, f"d{n}-b": 1} if n % 2 else {f"d{n}-a": 1}


def _ranking(n: int) -> list[str]:
    """Base's ranking of question n: its first gold chunk at rank 1 + n % 3 among others."""
    others = [f"d{(n + j) % QUESTIONS}-a" for j in range(1, 4)]
    at = n % 3
    return [*others[:at], f"d{n}-a", *others[at:], f"d{n}-b"]


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ci_eval", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False,
                          env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"})


def _write_side(folder: Path, version: str, chunks: dict[str, tuple[str, str]], rankings: dict,
                entries: list | None = None) -> None:
    folder.mkdir()
    entries = entries or [{"id": cid, "doc": doc, "text": text} for cid, (doc, text) in sorted(chunks.items())]
    (folder / "index.jsonl").write_text("\n".join(map(json.dumps, [{"version": version}, *entries])) + "\n")
    (folder / "run.jsonl").write_text("".join(
        json.dumps({"id": qid, "results": [[cid, 10.0 - r] for r, cid in enumerate(ranking)]}) + "\n"
        for qid, ranking in rankings.items()))
    (folder / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 3\n[retriever]\ntype = "run-file"\n'
                                         'path = "run.jsonl"\n[index]\nmanifest = "index.jsonl"\n')


def _ok(r: subprocess.CompletedProcess, *codes: int) -> subprocess.CompletedProcess:
    assert r.returncode in (codes or (0,)), r.stdout + r.stderr
    return r


def _branches(tmp_path: Path, lose=(), relabel=None) -> tuple[Path, Path]:
    """Both branches run; head's ranking drops the gold of the questions in ``lose``
    (evidence lost by the re-chunk); ``relabel``: a question a person relabels on head."""
    base, head = tmp_path / "base", tmp_path / "head"
    _write_side(base, "v1", OLD, {f"q{n}": _ranking(n) for n in range(QUESTIONS)})
    (base / "gold.json").write_text(json.dumps({"schema_version": 1, "index_version": "v1", "questions": [
        {"id": f"q{n}", "question": f"What does section {n} say?", "gold": _gold(n)} for n in range(QUESTIONS)]}))
    _ok(_cli("gold", "anchor", "--gold", "gold.json", "--manifest", "index.jsonl", cwd=base))
    new = {RENAMED[old]: (doc, _new_text(old)) for old, (doc, _) in OLD.items()}
    misses = [RENAMED[f"d{(n + 5) % QUESTIONS}-b"] for n in range(QUESTIONS)]
    _write_side(head, "v2", new, {
        f"q{n}": ([misses[n]] if f"q{n}" in lose else [RENAMED[c] for c in _ranking(n)]) for n in range(QUESTIONS)})
    shutil.copy(base / "gold.json", head / "gold.json")
    _ok(_cli("gold", "remap", "--manifest", "index.jsonl", "--write", "--accept-proposals", "--by", "ana", cwd=head))
    if relabel is not None:
        doc = json.loads((head / "gold.json").read_text())
        (q,) = [q for q in doc["questions"] if q["id"] == relabel]
        q["gold"] = {**q["gold"], RENAMED[f"d{(int(relabel[1:]) + 1) % QUESTIONS}-a"]: 1}
        (head / "gold.json").write_text(json.dumps(doc))
    for side in (base, head):
        _ok(_cli("run", "--out", "run.json", "--quiet", cwd=side))
    return base / "run.json", head / "run.json"


def _compare(base: Path, head: Path, cwd: Path, fmt: str = "markdown") -> subprocess.CompletedProcess:
    return _cli("compare", base, head, "--no-config", "--max-drop", "mrr=0.05", "--format", fmt, cwd=cwd)


def _mean_chars(chunks) -> str:
    return f"{sum(len(t) for t in chunks) / len(chunks):,.0f}"


def test_a_rename_only_rechunk_gives_no_change_and_passes(tmp_path):
    base, head = _branches(tmp_path)
    recorded = json.loads(head.read_text())["gold_set"]["remap"]
    assert recorded["mappings"] == {old: {"new": [RENAMED[old]],
                                          "rule": "accepted proposal" if old == EDITED else "automatic"}
                                    for n in range(QUESTIONS) for old in _gold(n)}
    r = _ok(_compare(base, head, tmp_path))
    verdict, baseline = r.stdout.splitlines()[1:3]
    assert verdict.startswith(f"### ✅ No change: every metric of all {QUESTIONS} compared questions is as before")
    assert baseline.endswith(f"; {QUESTIONS} questions compared across a re-chunk (index `v1` → `v2`; "
                             f"{QUESTIONS} questions through the remap, 1 proposal accepted by a person). \\")
    new_texts = [_new_text(old) for old in OLD]
    assert (f"**Changed:** index re-chunked ({len(OLD)} → {len(OLD)} chunks, mean "
            f"{_mean_chars([t for _, t in OLD.values()])} → {_mean_chars(new_texts)} characters)") in r.stdout
    report = json.loads(_ok(_compare(base, head, tmp_path, "json")).stdout)
    assert report["passed"] and report["compared"] == QUESTIONS and report["gold_set"]["relabelled"] == {}
    assert report["gold_set"]["rechunk"] == {"from_index_version": "v1", "to_index_version": "v2",
                                             "questions": QUESTIONS, "proposals_accepted": 1}


def test_a_rechunk_that_loses_evidence_regresses_exactly_those_questions(tmp_path):
    lost = ("q2", "q7", "q9")
    base, head = _branches(tmp_path, lose=lost)
    r = _compare(base, head, tmp_path, "json")
    report = json.loads(_ok(r, 0, 1).stdout)
    assert report["compared"] == QUESTIONS
    assert sorted(q["id"] for q in report["regressions"]) == sorted(lost)
    comment = _ok(_compare(base, head, tmp_path), 0, 1).stdout
    assert f"{QUESTIONS} questions compared across a re-chunk (index `v1` → `v2`;" in comment.splitlines()[2]
    section = comment.split(f"#### Regressions ({len(lost)}): {len(lost)} lost at k=3", 1)[1].split("####")[0]
    assert sorted(re.findall(r"^\| `(q\d+)`", section, re.M)) == sorted(lost)


def test_a_person_s_relabel_stays_excluded(tmp_path):
    base, head = _branches(tmp_path, relabel="q3")
    report = json.loads(_ok(_compare(base, head, tmp_path, "json")).stdout)
    assert report["gold_set"]["relabelled"] == {"q3": "+1 gold"}
    assert report["compared"] == QUESTIONS - 1 and "q3" not in report["unchanged"]
    assert report["gold_set"]["rechunk"]["questions"] == QUESTIONS - 1


def test_a_split_of_every_chunk_is_compared_through_the_remap(tmp_path):
    """A real re-chunk: each document's one chunk cut in two (spans in both manifests, new
    ids that carry no information), so the remap maps each gold id onto both halves by span,
    and head's retriever ranks the first half where base ranked the whole."""
    base, head = tmp_path / "base", tmp_path / "head"
    docs = {n: _text(n, "a") + " " + _text(n, "b") for n in range(QUESTIONS)}
    half = {n: len(docs[n]) // 2 for n in docs}
    old = [{"id": f"s{n}", "doc": f"doc{n}", "start": 0, "end": len(docs[n]), "text": docs[n]} for n in docs]
    cut = {(n, p): f"c{(13 * (2 * n + p) + 3) % (2 * QUESTIONS):03d}" for n in docs for p in (0, 1)}
    new = [{"id": cut[n, p], "doc": f"doc{n}", "start": (0, half[n])[p], "end": (half[n], len(docs[n]))[p],
            "text": docs[n][(0, half[n])[p]:(half[n], len(docs[n]))[p]]} for n in docs for p in (0, 1)]

    def ranking(n, ids):
        others = [ids((n + j) % QUESTIONS) for j in range(1, 4)]
        return [*others[:n % 3], ids(n), *others[n % 3:]]

    _write_side(base, "v1", {}, {f"q{n}": ranking(n, lambda m: f"s{m}") for n in docs}, old)
    _write_side(head, "v2", {}, {f"q{n}": ranking(n, lambda m: cut[m, 0]) for n in docs}, new)
    (base / "gold.json").write_text(json.dumps({"schema_version": 1, "index_version": "v1", "questions": [
        {"id": f"q{n}", "question": f"What does document {n} say?", "gold": [f"s{n}"]} for n in docs]}))
    _ok(_cli("gold", "anchor", "--gold", "gold.json", "--manifest", "index.jsonl", cwd=base))
    shutil.copy(base / "gold.json", head / "gold.json")
    _ok(_cli("gold", "remap", "--manifest", "index.jsonl", "--write", cwd=head))
    for side in (base, head):
        _ok(_cli("run", "--out", "run.json", "--quiet", cwd=side))
    r = _ok(_compare(base / "run.json", head / "run.json", tmp_path, "json"))
    report = json.loads(r.stdout)
    assert report["compared"] == QUESTIONS and report["gold_set"]["relabelled"] == {}
    assert report["gold_set"]["rechunk"]["questions"] == QUESTIONS
    assert report["gold_set"]["rechunk"]["proposals_accepted"] == 0
    # the first relevant chunk sits where the whole did: hit@3 and MRR as before
    moved = {m["metric"]: m["delta"] for m in report["metrics"]}
    assert moved["hit@3"] == 0 and moved["mrr"] == 0
    comment = _ok(_compare(base / "run.json", head / "run.json", tmp_path)).stdout
    assert (f"index re-chunked ({QUESTIONS} → {2 * QUESTIONS} chunks, mean {_mean_chars(docs.values())} → "
            f"{_mean_chars([e['text'] for e in new])} characters)") in comment
