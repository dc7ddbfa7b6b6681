"""`ci-eval gold export` writes only what the format holds exactly, through the real CLI."""

from __future__ import annotations

import json

from gold_cli import gold, refused

from ci_eval.trec.parse import read_qrels_dict


def write_gold(folder, questions) -> None:
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "index_version": "v1",
                                                  "questions": questions}), encoding="utf-8")


INJECTING = "kb/right\nq2 0 kb/wrong 1"  # a newline would add a judgement to another question


def test_an_id_trec_cannot_hold_is_refused_naming_it_and_nothing_is_written(tmp_path):
    write_gold(tmp_path, [{"id": "q1", "question": "one?", "gold": ["docs/My Guide.md", INJECTING]},
                          {"id": "q 2", "question": "two?", "gold": ["kb/ok"]}])
    problems = refused(gold("export", "--format", "trec", "--gold", "gold.json", "--out", "out", cwd=tmp_path))
    assert problems == [
        "gold.json:question 'q1' (questions[0]).gold: cannot export chunk id 'docs/My Guide.md' as trec: "
        "it holds space (' ') (TREC qrels and topics separate their columns by whitespace)",
        f"gold.json:question 'q1' (questions[0]).gold: cannot export chunk id {INJECTING!r} as trec: "
        "it holds a control character ('\\n') (TREC qrels and topics separate their columns by whitespace)",
        "gold.json:question 'q 2' (questions[1]): cannot export question id 'q 2' as trec: "
        "it holds space (' ') (TREC qrels and topics separate their columns by whitespace)",
    ]
    assert not (tmp_path / "out").exists()


def test_unicode_space_is_refused_for_trec_too(tmp_path):
    write_gold(tmp_path, [{"id": "q1", "question": "one?", "gold": ["a\u2003b"]}])
    problems = refused(gold("export", "--format", "trec", "--gold", "gold.json", "--out", "out", cwd=tmp_path))
    assert len(problems) == 1 and "em space" in problems[0]


def test_a_tab_is_refused_for_beir_and_a_space_round_trips_exactly(tmp_path):
    write_gold(tmp_path, [{"id": "q1", "question": "one?", "gold": ["a\tb"]}])
    problems = refused(gold("export", "--format", "beir", "--gold", "gold.json", "--out", "out", cwd=tmp_path))
    assert len(problems) == 1 and "cannot export chunk id 'a\\tb' as beir" in problems[0]
    assert not (tmp_path / "out").exists()

    spaced = {"id": "q 1", "question": "one?", "gold": {"docs/My Guide.md": 2, " lead": 1}}
    write_gold(tmp_path, [spaced])
    done = gold("export", "--format", "beir", "--gold", "gold.json", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    back = gold("import", "--format", "beir", "out", "--out", "back.json", cwd=tmp_path)
    assert back.returncode == 0, back.stderr
    assert json.loads((tmp_path / "back.json").read_text())["questions"] == [spaced]


def test_what_trec_export_writes_evaluate_reads_back_as_the_same_judgements(tmp_path):
    questions = [{"id": "q1", "question": "one?", "gold": {"kb/é#1": 2, "kb/x": 0}},
                 {"id": "q2", "question": "two?", "gold": ["kb/a-b.md#3"]}]
    write_gold(tmp_path, questions)
    done = gold("export", "--format", "trec", "--gold", "gold.json", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert read_qrels_dict(str(tmp_path / "out" / "qrels.txt")) == {
        q["id"]: (q["gold"] if isinstance(q["gold"], dict) else dict.fromkeys(q["gold"], 1)) for q in questions}
