"""`ci-eval gold anchor|remap|import|export` end to end on real files."""

from __future__ import annotations

import json
from pathlib import Path

from run_files import read_run

from ci_eval.cli import main
from ci_eval.core.gold.fingerprint import text_hash
from ci_eval.trec.parse import read_qrels_dict

DOC = "Wings make lift. " * 6 + "Lift depends on speed. " * 6 + "Drag slows the plane. " * 6
# Old chunking: three chunks of equal length; new chunking: the middle one split in two.
THIRD = len(DOC) // 3


def chunk(cid, start, end):
    return {"id": cid, "doc": "aero", "start": start, "end": end, "text": DOC[start:end]}


def write_jsonl(path: Path, version: str, entries) -> Path:
    path.write_text("\n".join([json.dumps({"version": version}), *map(json.dumps, entries)]) + "\n")
    return path


def project(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "old.jsonl", "v1", [chunk("aero#0", 0, THIRD), chunk("aero#1", THIRD, 2 * THIRD),
                                             chunk("aero#2", 2 * THIRD, len(DOC))])
    half = THIRD + THIRD // 2
    write_jsonl(tmp_path / "new.jsonl", "v2", [
        {"id": "aero/p1", "doc": "aero", "start": 0, "end": THIRD, "hash": text_hash(DOC[:THIRD])},
        chunk("aero/p2", THIRD, half), chunk("aero/p3", half, 2 * THIRD), chunk("aero/p4", 2 * THIRD, len(DOC))])
    (tmp_path / "gold.json").write_text(json.dumps({
        "schema_version": 1, "index_version": "v1",
        "questions": [{"id": "q1", "question": "What makes lift?", "gold": {"aero#0": 2, "aero#1": 1},
                       "notes": "kept as is"},
                      {"id": "q2", "question": "What slows a plane?", "gold": ["aero#2"]}]}))
    return tmp_path


def gold_cli(*args, cwd: Path) -> int:
    import os

    here = os.getcwd()
    os.chdir(cwd)
    try:
        return main(["gold", *args])
    finally:
        os.chdir(here)


def test_anchor_then_remap_a_split_and_a_rename(tmp_path, capsys):
    project(tmp_path)
    assert gold_cli("anchor", "--gold", "gold.json", "--manifest", "old.jsonl", cwd=tmp_path) == 0
    anchored = json.loads((tmp_path / "gold.json").read_text())
    assert anchored["schema_version"] == 2 and set(anchored["anchors"]) == {"aero#0", "aero#1", "aero#2"}
    assert anchored["anchors"]["aero#1"]["hash"] == text_hash(DOC[THIRD:2 * THIRD])
    assert "3 new" in capsys.readouterr().out

    before = (tmp_path / "gold.json").read_bytes()
    assert gold_cli("remap", "--gold", "gold.json", "--manifest", "new.jsonl", cwd=tmp_path) == 0
    table = capsys.readouterr().out
    assert (tmp_path / "gold.json").read_bytes() == before  # a dry run writes nothing
    # aero#0's text is unchanged under a new id (hash); aero#1 was split (span, both halves);
    # aero#2 moved with its text too.
    assert "aero#0      aero/p1" in table and "aero/p2, aero/p3" in table and "3 automatic" in table

    assert gold_cli("remap", "--gold", "gold.json", "--manifest", "new.jsonl", "--write", "--by", "ana",
                    cwd=tmp_path) == 0
    out = json.loads((tmp_path / "gold.json").read_text())
    assert out["questions"][0]["gold"] == {"aero/p1": 2, "aero/p2": 1, "aero/p3": 1}
    assert out["questions"][0]["notes"] == "kept as is"
    assert out["questions"][1]["gold"] == ["aero/p4"]
    assert out["index_version"] == "v2"
    (remap,) = out["provenance"]["remaps"]
    assert (remap["by"], remap["automatic"], remap["unresolved"]) == ("ana", 3, 0)
    assert gold_cli("remap", "--gold", "gold.json", "--manifest", "new.jsonl", cwd=tmp_path) == 0
    assert "no stale gold ids" in capsys.readouterr().out


def test_remap_without_anchors_exits_1_and_writes_nothing(tmp_path, capsys):
    project(tmp_path)
    before = (tmp_path / "gold.json").read_bytes()
    assert gold_cli("remap", "--gold", "gold.json", "--manifest", "new.jsonl", "--write", cwd=tmp_path) == 1
    assert "3 unresolved" in capsys.readouterr().out
    assert (tmp_path / "gold.json").read_bytes() == before


def test_trec_to_gold_to_trec_gives_the_same_qrels(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("7 0 d1 1\n7 0 d2 3\n9 0 d3 1\n9 0 d8 0\n9 0 d9 -1\n")
    (tmp_path / "topics.sgml").write_text("<top>\n<num> Number: 7\n<title> wings and lift\n"
                                          "<desc> Description:\nlong form\n</top>\n"
                                          "<top><num>9</num><title>drag</title></top>\n")
    assert gold_cli("import", "--format", "trec", "qrels.txt", "topics.sgml", "--out", "gold.json",
                    cwd=tmp_path) == 0
    gold = json.loads((tmp_path / "gold.json").read_text())
    assert [q["question"] for q in gold["questions"]] == ["wings and lift", "drag"]
    assert gold["provenance"]["imports"][0]["questions"] == 2
    assert gold_cli("export", "--format", "trec", "--gold", "gold.json", "--out", "out", cwd=tmp_path) == 0
    assert read_qrels_dict(str(tmp_path / "out" / "qrels.txt")) == read_qrels_dict(str(tmp_path / "qrels.txt"))
    assert (tmp_path / "out" / "topics.tsv").read_text() == "7\twings and lift\n9\tdrag\n"


def test_beir_to_gold_to_beir_gives_the_same_files_up_to_order(tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    queries = [{"_id": "q2", "text": "why is the sky blue"}, {"_id": "q1", "text": "what is ice"},
               {"_id": "q3", "text": "not judged in this split"}]
    (beir / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tdoc-ice\t1\nq2\tdoc-sky\t2\nq2\tdoc-sun\t1\n")
    (beir / "corpus.jsonl").write_text(json.dumps({"_id": "doc-ice", "title": "Ice", "text": "Frozen water."}) + "\n")
    assert gold_cli("import", "--format", "beir", "beir", "--manifest-out", "index.jsonl", "--out", "gold.json",
                    cwd=tmp_path) == 0
    manifest = [json.loads(line) for line in (tmp_path / "index.jsonl").read_text().splitlines()]
    assert manifest == [{"id": "doc-ice", "doc": "doc-ice", "text": "Ice\n\nFrozen water."}]
    assert gold_cli("export", "--format", "beir", "--gold", "gold.json", "--out", "back", cwd=tmp_path) == 0
    judged = [q for q in queries if q["_id"] != "q3"]
    assert sorted((tmp_path / "back" / "queries.jsonl").read_text().splitlines()) == sorted(map(json.dumps, judged))
    lines = lambda p: (p.read_text().splitlines()[0], sorted(p.read_text().splitlines()[1:]))  # noqa: E731
    assert lines(tmp_path / "back" / "qrels" / "test.tsv") == lines(beir / "qrels" / "test.tsv")


def test_rows_import_and_merge_name_both_places_of_a_collision(tmp_path, capsys):
    (tmp_path / "rows.csv").write_text("id,question,gold,tags\na,How do I log in?,kb/login;kb/sso=2,auth\n"
                                       ",Where is billing?,kb/billing,\n")
    assert gold_cli("import", "--format", "csv", "rows.csv", "--out", "gold.json", cwd=tmp_path) == 0
    gold = json.loads((tmp_path / "gold.json").read_text())
    assert [(q["id"], q["gold"]) for q in gold["questions"]] == [("a", {"kb/login": 1, "kb/sso": 2}),
                                                                 ("q3", ["kb/billing"])]
    (tmp_path / "more.jsonl").write_text(json.dumps({"id": "b", "question": "how do i  LOG in?", "gold": ["x"]}) + "\n")
    before = (tmp_path / "gold.json").read_bytes()
    assert gold_cli("import", "--format", "jsonl", "more.jsonl", "--out", "gold.json", "--merge", cwd=tmp_path) == 2
    err = capsys.readouterr().err
    assert "more.jsonl:line 1: the same question is already at gold.json:question 'a' (questions[0])" in err
    assert (tmp_path / "gold.json").read_bytes() == before


def test_evaluate_on_exported_qrels_equals_run_on_the_gold_set(tmp_path, capsys):
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": "q1", "question": "one?", "gold": {"a": 2, "b": 1}},
        {"id": "q2", "question": "two?", "gold": ["c"]},
        {"id": "q3", "question": "three?", "gold": ["z"]}]}))
    (tmp_path / "run.trec").write_text("".join(
        f"{q} Q0 {d} {r} {10 - r} t\n" for q, docs in (("q1", "xbya"), ("q2", "cx"), ("q3", "xyuv"))
        for r, d in enumerate(docs, 1)))
    (tmp_path / "ci-eval.toml").write_text(
        'gold_set = "gold.json"\nk = 3\nmetrics = ["mrr", "hit@3", "recall@3", "precision@3", "ndcg@3", "map"]\n'
        '[retriever]\ntype = "run-file"\npath = "run.trec"\nformat = "trec"\n')
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["run", "--out", "run.json", "--quiet"]) == 0
        assert main(["gold", "export", "--format", "trec", "--out", "ex"]) == 0
        capsys.readouterr()
        assert main(["evaluate", "--format", "json", "-M", "9", "-m", "recip_rank", "-m", "success.3",
                     "-m", "recall.3", "-m", "P.3", "-m", "ndcg_cut.3", "-m", "map", "ex/qrels.txt", "run.trec"]) == 0
    finally:
        os.chdir(here)
    trec = json.loads(capsys.readouterr().out)["all"]
    ours = json.loads((tmp_path / "run.json").read_text())["summary"]["overall"]["means"]
    names = {"mrr": "recip_rank", "hit@3": "success_3", "recall@3": "recall_3", "precision@3": "P_3",
             "ndcg@3": "ndcg_cut_3", "map": "map"}
    assert {m: ours[m] for m in names} == {m: trec[t] for m, t in names.items()}
    # A hand check of one of them: reciprocal ranks 1/2 (b), 1 (c), 0.
    assert ours["mrr"] == (1 / 2 + 1 + 0) / 3


def test_check_run_and_the_comment_name_the_remap(tmp_path, capsys):
    import os

    from ci_eval.github.steps import stale_annotations

    project(tmp_path)
    assert gold_cli("anchor", "--gold", "gold.json", "--manifest", "old.jsonl", cwd=tmp_path) == 0
    # The index was re-ingested: the configuration now points at the new manifest.
    (tmp_path / "run.jsonl").write_text("".join(json.dumps({"id": q, "results": [["aero/p1", 1.0]]}) + "\n"
                                                for q in ("q1", "q2")))
    (tmp_path / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "run-file"\n'
                                           'path = "run.jsonl"\n[index]\nmanifest = "new.jsonl"\n')
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        capsys.readouterr()
        assert main(["check"]) == 1
        assert ("3 of the 3 distinct stale gold ids have an automatic remap: run 'ci-eval gold remap --write'"
                in capsys.readouterr().out)
        assert main(["run", "--out", "head.json", "--quiet"]) == 0
        assert main(["compare", "head.json", "head.json"]) in (0, 1)
    finally:
        os.chdir(here)
    comment = capsys.readouterr().out
    head = read_run(tmp_path / "head.json")
    assert head["index"]["remap"]["to"]["aero#1"] == {"new": ["aero/p2", "aero/p3"], "kind": "automatic"}
    assert "3 of the 3 distinct stale gold ids have an automatic remap: run `ci-eval gold remap --write`" in comment
    (note,) = [a for a in stale_annotations(head, None) if "q1" in a]
    assert "aero#1 -> aero/p2, aero/p3 (automatic)" in note


def test_the_hint_counts_proposals_and_stays_silent_without_remaps():
    from ci_eval.core.gold.remap import remap_hint

    assert remap_hint(None) == "" and remap_hint({"automatic": 0, "proposed": 0, "unresolved": 4}) == ""
    assert remap_hint({"automatic": 1, "proposed": 2, "unresolved": 1}) == (
        "1 of the 4 distinct stale gold ids has an automatic remap and 2 a proposed one (add `--accept-proposals` "
        "to take them): run `ci-eval gold remap --write` to update the gold set.")


def test_check_says_when_anchors_are_out_of_date(tmp_path, capsys):
    import os

    project(tmp_path)
    assert gold_cli("anchor", "--gold", "gold.json", "--manifest", "old.jsonl", cwd=tmp_path) == 0
    # The same chunks, moved further into the document: same text, new spans.
    moved = [json.loads(line) for line in (tmp_path / "old.jsonl").read_text().splitlines()[1:]]
    write_jsonl(tmp_path / "moved.jsonl", "v1", [dict(e, start=e["start"] + 7, end=e["end"] + 7) for e in moved])
    (tmp_path / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "run-file"\n'
                                           'path = "run.jsonl"\n[index]\nmanifest = "moved.jsonl"\n')
    (tmp_path / "run.jsonl").write_text("")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        capsys.readouterr()
        assert main(["check"]) == 0
    finally:
        os.chdir(here)
    assert "0 gold id(s) without an anchor, 3 anchor(s) out of date" in capsys.readouterr().out


def test_a_threshold_outside_0_to_1_is_a_usage_error(tmp_path, capsys):
    project(tmp_path)
    assert gold_cli("remap", "--gold", "gold.json", "--manifest", "new.jsonl", "--threshold", "1.5", cwd=tmp_path) == 2
    assert "--threshold 1.5: must be between 0 and 1" in capsys.readouterr().err


def test_gold_without_a_subcommand_says_which_exist(tmp_path, capsys):
    assert gold_cli(cwd=tmp_path) == 2
    assert "anchor, remap, import, export, mine or generate" in capsys.readouterr().err
