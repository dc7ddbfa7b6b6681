"""The readers of `ci-eval gold import` on hostile and exact inputs, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gold_cli import gold, refused


def test_unclosed_topic_tags_are_refused_in_linear_time(tmp_path):
    # 40,000 unclosed <top> took 65 s with the block pattern (quadratic): 400,000 would take
    # hours. A linear scan does them in well under a second, so the bound is generous.
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    (tmp_path / "topics.sgml").write_text("<top><num>1\n" * 400_000)
    result = gold("import", "--format", "trec", "qrels.txt", "topics.sgml", "--out", "gold.json",
                  cwd=tmp_path, timeout=60)
    assert refused(result) == ["topics.sgml:line 2: <top> before the previous topic's </top>"]
    assert not (tmp_path / "gold.json").exists()


def test_many_fields_in_one_topic_are_read_in_linear_time(tmp_path):
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    (tmp_path / "topics.sgml").write_text("<top><num>1<title>wings<desc>" + "<nu" * 300_000 + "x</top>")
    result = gold("import", "--format", "trec", "qrels.txt", "topics.sgml", "--out", "gold.json",
                  cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "gold.json").is_file()


def test_a_closing_tag_without_its_opening_is_named_at_its_line(tmp_path):
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n")
    (tmp_path / "topics.sgml").write_text("<top><num>1<title>wings</top>\n\n</top>\n")
    result = gold("import", "--format", "trec", "qrels.txt", "topics.sgml", "--out", "gold.json", cwd=tmp_path)
    assert refused(result) == ["topics.sgml:line 3: </top> without its <top>"]


def test_identical_repeated_judgements_are_kept_once_and_counted_aloud(tmp_path):
    (tmp_path / "rows.csv").write_text("id,question,gold\nn1,Refunds?,kb/a;kb/a;kb/b=2\n")
    (tmp_path / "beir" / "qrels").mkdir(parents=True)
    (tmp_path / "beir" / "queries.jsonl").write_text('{"_id": "q1", "text": "Refunds?"}\n')
    (tmp_path / "beir" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tkb/a\t1\nq1\tkb/a\t1\n")
    (tmp_path / "rows.jsonl").write_text('{"id": "n1", "question": "Refunds?", "gold": ["kb/a", "kb/a", "kb/a"]}\n')
    # qrels files concatenated: the repeat comes after a comment, spelt with a tab and a blank
    (tmp_path / "qrels.txt").write_text("n1 0 kb/a 1\nn1 0 kb/b 2\n# the second export\nn1\t0  kb/a 1\n")
    (tmp_path / "topics.tsv").write_text("n1\tRefunds?\n")
    for args, gold_value, repeated in [(["--format", "csv", "rows.csv"], {"kb/a": 1, "kb/b": 2}, 1),
                                       (["--format", "trec", "qrels.txt", "topics.tsv"], {"kb/a": 1, "kb/b": 2}, 1),
                                       (["--format", "beir", "beir"], ["kb/a"], 1),
                                       (["--format", "jsonl", "rows.jsonl"], ["kb/a"], 2)]:
        out = f"{args[1]}.json"
        done = gold("import", *args, "--out", out, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == (f"{out}: 1 question(s) imported from {args[1]}; "
                               f"{repeated} repeated judgement(s) with the same grade kept once\n")
        assert json.loads((tmp_path / out).read_text())["questions"][0]["gold"] == gold_value


def test_topics_left_out_are_counted_by_reason(tmp_path):
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n2 0 d2 0\n")
    (tmp_path / "topics.tsv").write_text("1\twings\n2\tdrag\n3\tlift\n4\tflaps\n")
    done = gold("import", "--format", "trec", "qrels.txt", "topics.tsv", "--out", "gold.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("gold.json: 1 question(s) imported from trec; 1 left out (no judgement of grade 1 "
                           "or more, first: '2'); 2 left out (no judgements, first: '3')\n")


def test_an_error_the_gold_set_check_finds_names_the_source_line(tmp_path):
    (tmp_path / "rows.jsonl").write_text('{"id": "n1", "question": "Refunds?", "gold": ["kb/a"]}\n'
                                         '{"id": "n2", "question": "Plans?", "gold": {"kb/b": 5000}}\n')
    problems = refused(gold("import", "--format", "jsonl", "rows.jsonl", "--out", "gold.json", cwd=tmp_path))
    assert len(problems) == 1 and problems[0].startswith("rows.jsonl:line 2.gold"), problems
    assert not (tmp_path / "gold.json").exists()


def test_qrels_ids_that_differ_only_in_bytes_that_are_not_utf8_are_refused(tmp_path):
    (tmp_path / "qrels.txt").write_bytes(b"1 0 caf\xe9 1\n1 0 caf\xe8 1\n")
    (tmp_path / "topics.tsv").write_text("1\tcoffee\n")
    problems = refused(gold("import", "--format", "trec", "qrels.txt", "topics.tsv", "--out", "gold.json",
                            cwd=tmp_path))
    assert problems == ["qrels.txt:line 1: not valid UTF-8 (a gold set holds text ids)"]


def _beir_from_qrels(qrels: Path, topics: dict[str, str], folder: Path) -> None:
    """A BEIR folder holding a TREC collection's judged queries and judgements."""
    (folder / "qrels").mkdir(parents=True)
    rows = [line.split() for line in qrels.read_text().splitlines()]
    judged = list(dict.fromkeys(r[0] for r in rows))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": topics[q]}, ensure_ascii=False)
                                                  + "\n" for q in judged))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                               + "".join(f"{q}\t{d}\t{g}\n" for q, _, d, g in rows))


COLLECTIONS = {"vaswani_npl": ("qrels", "query-text.trec"),
               "cranfield": ("derived/cranqrel.gain.trec", "derived/queries.tsv")}


@pytest.mark.parametrize("name", COLLECTIONS)
def test_trec_and_beir_round_trips_are_byte_identical_on_the_shared_collections(name, shared_dir, tmp_path):
    folder = shared_dir / "collections" / name
    qrels, topics = (folder / p for p in COLLECTIONS[name])
    done = gold("import", "--format", "trec", str(qrels), str(topics), "--out", "gold.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert gold("export", "--format", "trec", "--gold", "gold.json", "--out", "trec", cwd=tmp_path).returncode == 0
    assert (tmp_path / "trec" / "qrels.txt").read_bytes() == qrels.read_bytes()
    if name == "vaswani_npl":  # SGML topics; Cranfield's tsv carries a second id column
        assert gold("export", "--format", "trec", "--topics", "sgml", "--gold", "gold.json", "--out", "sgml",
                    cwd=tmp_path).returncode == 0
        assert (tmp_path / "sgml" / "topics.txt").read_bytes() == topics.read_bytes()

    texts = {q["id"]: q["question"] for q in json.loads((tmp_path / "gold.json").read_text())["questions"]}
    _beir_from_qrels(qrels, texts, tmp_path / "beir")
    done = gold("import", "--format", "beir", "beir", "--out", "beir.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert gold("export", "--format", "beir", "--gold", "beir.json", "--out", "back", cwd=tmp_path).returncode == 0
    for rel in ("queries.jsonl", "qrels/test.tsv"):
        assert (tmp_path / "back" / rel).read_bytes() == (tmp_path / "beir" / rel).read_bytes(), rel


def test_sgml_topics_read_back_as_the_same_questions_and_refuse_text_that_reads_as_structure(tmp_path):
    questions = [{"id": "q1", "question": "what  is\tx < y and a<b>?", "gold": ["c1"]},
                 {"id": "q2", "question": "why is the sky blue?", "gold": {"c2": 2}}]
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": questions}))
    assert gold("export", "--format", "trec", "--topics", "sgml", "--gold", "gold.json", "--out", "t",
                cwd=tmp_path).returncode == 0
    done = gold("import", "--format", "trec", "t/qrels.txt", "t/topics.txt", "--out", "back.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    back = json.loads((tmp_path / "back.json").read_text())["questions"]
    # Whitespace runs become one space, as the topics reader and the tsv writer both do.
    assert [(q["id"], q["question"]) for q in back] == [("q1", "what is x < y and a<b>?"),
                                                        ("q2", "why is the sky blue?")]

    questions[1]["question"] = "what does </TITLE> mean?"
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": questions}))
    done = gold("export", "--format", "trec", "--topics", "sgml", "--gold", "gold.json", "--out", "u",
                cwd=tmp_path)
    [line] = refused(done)
    assert line.startswith("gold.json:question 'q2' (questions[1]): cannot export the question text as SGML "
                           "topics: it holds '</TITLE>'"), line
    assert not (tmp_path / "u").exists()
    [line] = refused(gold("export", "--format", "beir", "--topics", "sgml", "--gold", "gold.json", "--out", "u",
                          cwd=tmp_path))
    assert line.startswith("--topics is for --format trec"), line
