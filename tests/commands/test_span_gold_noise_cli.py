"""Span gold through the real CLI, without noise: a span past its document's end is exit 2 at
its place; no index-drift or anchor advice for a gold set that names documents; `check`
counts stale gold and shows a few; `gold anchor` says what is true; a deleted document makes
stale gold, not a relabel; a rename is not a re-chunk; the resolved chunks are judged; the
comment names the artefact it was given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from projects import cli

TEXT = {"guide.md": "g" * 1500, "faq.md": "f" * 900}
SIZE = 300


def _project(folder: Path, questions: list[dict], gold_version: str | None = None) -> Path:
    chunks = [{"id": f"{doc[0]}{start}", "doc": doc, "start": start, "end": min(start + SIZE, len(text)),
               "text": text[start:start + SIZE]} for doc, text in TEXT.items() for start in range(0, len(text), SIZE)]
    (folder / "index.jsonl").write_text("\n".join(map(json.dumps, [{"version": "cut-300"}, *chunks])) + "\n")
    (folder / "run.jsonl").write_text("".join(
        json.dumps({"id": q["id"], "results": [[c["id"], 10.0 - n] for n, c in enumerate(chunks)]}) + "\n"
        for q in questions))
    gold = {"schema_version": 1, "questions": questions}
    if gold_version:
        gold["index_version"] = gold_version
    (folder / "gold.json").write_text(json.dumps(gold))
    (folder / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 5\nmetrics = ["recall@5", "evidence_recall@5"]\n'
                                         '[retriever]\ntype = "run-file"\npath = "run.jsonl"\n'
                                         '[index]\nmanifest = "index.jsonl"\n')
    return folder


@pytest.mark.parametrize("start, end", [(1400, 1600), (1600, 1700)])  # partly past the end, wholly past it
def test_a_span_past_its_document_s_end_is_exit_2_at_its_place(tmp_path, start, end):
    _project(tmp_path, [{"id": "q1", "question": "?", "gold": [], "evidence": [{"doc": "faq.md", "start": 0, "end": 50}]},
                        {"id": "q2", "question": "?", "gold": [],
                         "evidence": [{"doc": "faq.md", "start": 10, "end": 20},
                                      {"doc": "guide.md", "start": start, "end": end}]}])
    said = (f"gold.json:question 'q2' (questions[1]).evidence[1].end: the span {start}..{end} runs past the end "
            "of document 'guide.md', which has 1,500 characters in the index")
    for command in (["check"], ["run", "--out", "run.json"], ["sweep", "ci-eval.toml", "ci-eval.toml"]):
        done = cli(*command, cwd=tmp_path)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.strip().splitlines() == [f"ci-eval: error: {said}"], command
    assert not (tmp_path / "run.json").exists() and not (tmp_path / "ci-eval-sweep").exists()


def test_span_gold_gives_no_index_drift_or_anchor_advice(tmp_path):
    _project(tmp_path, [{"id": "q1", "question": "?", "gold": [], "evidence": [{"doc": "guide.md", "start": 0, "end": 200}]}],
             gold_version="cut-100")
    checked = cli("check", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "index drift" not in checked.stdout and "gold anchor" not in checked.stdout
    ran = cli("run", "--out", "run.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "index drift" not in ran.stdout + ran.stderr
    # id gold built against another index still hears of it
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "index_version": "cut-100",
                                                    "questions": [{"id": "q1", "question": "?", "gold": ["g0"]}]}))
    config = tmp_path / "ci-eval.toml"
    config.write_text(config.read_text().replace(', "evidence_recall@5"', ""))
    ids = cli("check", cwd=tmp_path)
    assert "index drift: the gold set was built against 'cut-100'" in ids.stdout


def test_check_counts_stale_gold_and_shows_a_few(tmp_path):
    questions = [{"id": f"q{n:02d}", "question": "?", "gold": [],
                  "evidence": [{"doc": "faq.md", "quote": f"gone {n}"}, {"doc": "faq.md", "quote": f"lost {n}"}]}
                 for n in range(12)]
    _project(tmp_path, questions)
    done = cli("check", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    listed = [line for line in done.stdout.splitlines() if line.startswith("gold.json: question")]
    assert len(listed) == 5
    assert listed[0] == "gold.json: question 'q00': stale gold id(s): evidence:faq.md:'gone 0', evidence:faq.md:'lost 0'"
    assert "gold.json: and 7 more question(s) with stale gold (14 id(s))" in done.stdout
    assert "24 distinct stale gold id(s) in 12 question(s)" in done.stdout


def test_gold_anchor_on_span_gold_says_what_is_true(tmp_path):
    _project(tmp_path, [{"id": "q1", "question": "?", "gold": [], "evidence": [{"doc": "guide.md", "start": 0, "end": 200}]}])
    before = (tmp_path / "gold.json").read_bytes()
    done = cli("gold", "anchor", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "gives ids only" not in done.stdout  # the manifest gives doc, start, end and text
    assert "gold.json names no gold ids to anchor: its evidence is document spans or quotes" in done.stdout
    assert (tmp_path / "gold.json").read_bytes() == before


def _index(folder: Path, version: str, docs=TEXT, prefix: str = "") -> None:
    chunks = [{"id": f"{prefix}{doc[0]}{start}", "doc": doc, "start": start, "end": min(start + SIZE, len(text)),
               "text": text[start:start + SIZE]} for doc, text in docs.items() for start in range(0, len(text), SIZE)]
    (folder / "index.jsonl").write_text("\n".join(map(json.dumps, [{"version": version}, *chunks])) + "\n")
    (folder / "run.jsonl").write_text("".join(
        json.dumps({"id": f"q{n}", "results": [[c["id"], 10.0 - r] for r, c in enumerate(chunks)]}) + "\n"
        for n in range(16)))


SPAN_QUESTIONS = [{"id": f"q{n}", "question": f"question {n}", "gold": [],
                   "evidence": [{"doc": ("guide.md", "faq.md")[n % 2], "start": 50 * n, "end": 50 * n + 60}]}
                  for n in range(16)]


def _two_runs(tmp_path: Path, head_docs: dict, head_prefix: str) -> None:
    for side, docs, prefix in (("base", TEXT, ""), ("head", head_docs, head_prefix)):
        folder = tmp_path / side
        folder.mkdir()
        _project(folder, SPAN_QUESTIONS)
        _index(folder, f"{side}-index", docs, prefix)
        done = cli("run", "--out", "run.json", "--quiet", cwd=folder)
        assert done.returncode == 0, done.stdout + done.stderr


def test_a_document_deleted_from_the_index_makes_stale_gold_never_relabelled(tmp_path):
    _two_runs(tmp_path, {"guide.md": TEXT["guide.md"]}, "")  # faq.md deleted from the head's index
    done = cli("compare", "base/run.json", "head/run.json", "--no-config", "--format", "json", cwd=tmp_path)
    report = json.loads(done.stdout)
    assert report["gold_set"]["relabelled"] == {}
    faq = {f"q{n}" for n in range(1, 16, 2)}  # the questions whose evidence is in the deleted document
    assert set(report["stale"]["questions"]) == faq and report["compared"] == 8
    md = cli("compare", "base/run.json", "head/run.json", "--no-config", cwd=tmp_path).stdout
    assert "No comparison possible" not in md and "relabelled" not in md.lower()
    assert "#### Stale gold" in md and "8 questions point at 8 distinct gold ids missing from index" in md


def test_a_rename_only_index_says_chunk_ids_renamed_and_the_comment_names_the_artefact(tmp_path):
    _two_runs(tmp_path, TEXT, "renamed-")
    done = cli("compare", "base/run.json", "head/run.json", "--no-config", cwd=tmp_path)
    assert "chunk ids renamed (8 chunks, cut where they were)" in done.stdout, done.stdout
    assert "re-chunked" not in done.stdout
    # the head's top 5 are guide.md's five chunks: every one judged for the eight questions
    # on guide.md (relevant, or judged 0 as text of the document their evidence names),
    # none for the eight on faq.md, whose document the ranking never reaches
    assert f"judged@5 {(8 * 1.0 + 8 * 0.0) / 16:.3f}" in done.stdout
    assert "Judge them with `ci-eval label --pool head/run.json`." in done.stdout
