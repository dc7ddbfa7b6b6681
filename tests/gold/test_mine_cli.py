"""`ci-eval gold mine` end to end: real files in, the candidates file `label` reads out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from ci_eval.cli import main
from ci_eval.core.gold.candidates import normalise
from ci_eval.label.sources import read_candidates

LOG = ["Why does a wing stall?", "why does a wing stall", "What is flutter?", "how is heat conducted in a slab",
       "why does a wing stall?", "How is heat conducted in a slab"]


def mine_cli(tmp_path: Path, *args: str) -> int:
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        return main(["gold", "mine", *args])
    finally:
        os.chdir(here)


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_text_log_becomes_candidates_with_their_frequency(tmp_path, capsys):
    (tmp_path / "asked.log").write_text("\n".join(LOG) + "\n\n")
    assert mine_cli(tmp_path, "asked.log", "--out", "mined.jsonl", "--no-gold") == 0
    counted = Counter(normalise(q) for q in LOG)
    got = rows(tmp_path / "mined.jsonl")
    assert {normalise(r["question"]): r["frequency"] for r in got} == dict(counted)
    assert read_candidates(str(tmp_path / "mined.jsonl")) == [r["question"] for r in got]
    out = capsys.readouterr().out
    assert f"{len(LOG)} question(s) read, {len(counted)} distinct" in out and "ci-eval label --candidates" in out


def test_json_lines_with_a_dotted_field_skip_other_events_and_say_so(tmp_path, capsys):
    lines = [{"request": {"query": q}} for q in LOG[:3]] + [{"event": "startup"}]
    (tmp_path / "app.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    assert mine_cli(tmp_path, "app.jsonl", "--field", "request.query", "--out", "mined.jsonl", "--no-gold") == 0
    assert sum(r["frequency"] for r in rows(tmp_path / "mined.jsonl")) == 3
    assert "1 line(s) without a question skipped, first: line 4" in capsys.readouterr().out


def otlp_span(kind: str, value: str) -> dict:
    return {"attributes": [{"key": "openinference.span.kind", "value": {"stringValue": kind}},
                           {"key": "input.value", "value": {"stringValue": value}}]}


def test_traces_give_the_questions_of_retrieval_spans_only(tmp_path):
    batch = {"resourceSpans": [{"scopeSpans": [{"spans": [
        otlp_span("RETRIEVER", "What is flutter?"), otlp_span("LLM", "You are a helpful assistant")]}]}]}
    flat = {"attributes": {"openinference.span.kind": "RETRIEVER", "input.value": "why does a wing stall"}}
    (tmp_path / "traces.jsonl").write_text(json.dumps(batch) + "\n" + json.dumps(flat) + "\n")
    assert mine_cli(tmp_path, "traces.jsonl", "--format", "openinference", "--out", "mined.jsonl", "--no-gold") == 0
    assert sorted(r["question"] for r in rows(tmp_path / "mined.jsonl")) == ["What is flutter?", "why does a wing stall"]


def test_questions_the_gold_set_holds_are_not_candidates(tmp_path, capsys):
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": "q1", "question": "Why does a wing stall", "gold": ["c1"]}]}))
    (tmp_path / "asked.log").write_text("\n".join(LOG) + "\n")
    assert mine_cli(tmp_path, "asked.log", "--gold", "gold.json", "--out", "mined.jsonl") == 0
    got = {normalise(r["question"]) for r in rows(tmp_path / "mined.jsonl")}
    assert got == {normalise(q) for q in LOG} - {"why does a wing stall"}
    assert "1 already in gold.json dropped" in capsys.readouterr().out


def test_an_existing_out_is_kept_without_force(tmp_path, capsys):
    (tmp_path / "asked.log").write_text("\n".join(LOG) + "\n")
    (tmp_path / "mined.jsonl").write_text("mine\n")
    assert mine_cli(tmp_path, "asked.log", "--out", "mined.jsonl", "--no-gold") == 2
    assert (tmp_path / "mined.jsonl").read_text() == "mine\n"
    assert "mined.jsonl: exists already" in capsys.readouterr().err
    assert mine_cli(tmp_path, "asked.log", "--out", "mined.jsonl", "--no-gold", "--force") == 0


def test_a_bad_json_line_is_one_line_naming_the_file_and_line(tmp_path):
    (tmp_path / "app.jsonl").write_text('{"question": "ok"}\n{"question": \n')
    done = subprocess.run([sys.executable, "-m", "ci_eval", "gold", "mine", "app.jsonl", "--out", "m.jsonl",
                           "--no-gold"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and not (tmp_path / "m.jsonl").exists()
    assert done.stderr.count("\n") == 1 and "app.jsonl:line 2" in done.stderr and "Traceback" not in done.stderr


def test_a_log_without_questions_is_refused(tmp_path, capsys):
    (tmp_path / "app.jsonl").write_text('{"q": "elsewhere"}\n')
    assert mine_cli(tmp_path, "app.jsonl", "--out", "m.jsonl", "--no-gold") == 2
    assert 'no line has a string under "question"' in capsys.readouterr().err


def test_half_a_surrogate_pair_in_a_log_line_is_mended_and_counted(tmp_path):
    from gold_cli import gold

    # a logger that cut "😀" (\ud83d\ude00) in two left the first half alone on line 2
    lines = ['{"question": "why does a wing stall"}', '{"question": "what is flutter \\ud83d"}',
             '{"question": "how is heat conducted in a slab"}']
    (tmp_path / "app.jsonl").write_text("\n".join(lines) + "\n")
    done = gold("mine", "app.jsonl", "--out", "mined.jsonl", "--no-gold", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 held half a surrogate pair (a broken character), mended to U+FFFD" in done.stdout
    questions = read_candidates(str(tmp_path / "mined.jsonl"))
    assert sorted(questions) == sorted(["why does a wing stall", "what is flutter \ufffd",
                                        "how is heat conducted in a slab"])

def crafted_log(path: Path, count: int) -> None:
    """``count`` questions whose every pair sits just under the default threshold: ten shared
    words (19 terms with their pairs) and five of each line's own (10 terms with the pair that
    joins them), so every pair's similarity is 19 / (19 + 2 * 10) = 0.487 < 0.5."""
    shared = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"
    path.write_text("".join(f"{shared} {' '.join(f'w{i}x{j}' for j in range(5))}\n" for i in range(count)))


def mine_aloud(tmp_path: Path, count: int) -> list[str]:
    crafted_log(tmp_path / "crafted.log", count)
    done = subprocess.run([sys.executable, "-m", "ci_eval", "gold", "mine", "crafted.log", "--no-gold",
                           "--out", "mined.jsonl"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_log_whose_every_pair_is_a_candidate_is_checked_a_bounded_number_of_pairs(tmp_path):
    # Every earlier question is a candidate of every later one: all n(n-1)/2 pairs were
    # checked. Now each question is checked against its CHECKS likeliest candidates at most.
    from ci_eval.core.gold.mining import CHECKS

    count = 600  # under EXHAUSTIVE: every leader is a candidate
    lines = mine_aloud(tmp_path, count)
    assert f"0 near-duplicate(s) folded into {count} question(s)" in lines[1]
    compared = CHECKS * (CHECKS + 1) // 2 + (count - CHECKS - 1) * CHECKS
    capped = count - CHECKS - 1
    assert lines[2] == (f"{compared:,} pair(s) compared on their terms (bounded: {capped:,} question(s) "
                        f"checked against their {CHECKS} likeliest candidates only)")


def test_a_large_crafted_log_is_checked_a_bounded_number_of_pairs_and_says_so(tmp_path):
    from ci_eval.core.gold.mining import BUCKET, CHECKS, EXHAUSTIVE

    count = EXHAUSTIVE + 1000  # past EXHAUSTIVE: candidates come from the band buckets
    lines = mine_aloud(tmp_path, count)
    assert f"0 near-duplicate(s) folded into {count} question(s)" in lines[1]
    said = lines[2].replace(",", "")
    compared = int(said.split()[0])
    assert compared <= CHECKS * count
    assert f"question(s) checked against their {CHECKS} likeliest candidates only" in said
    assert f"band bucket(s) full at {BUCKET} questions" in said


# Planted personal data and secrets, by the kind the summary counts them under.
PLANTED = {
    "emails": ["ana.lopez@example.com", "j.smith+rag@mail.example.co.uk"],
    "phone numbers": ["+44 20 7946 0958", "(555) 010-4477"],
    "card numbers": ["4111 1111 1111 1111"],  # passes the Luhn check
    "keys or tokens": ["sk-proj-abcdEFGH1234ijklMNOP5678", "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
                       "AKIAIOSFODNN7EXAMPLE"],
}


def planted_log(tmp_path: Path) -> list[str]:
    asked = [f"why does my account {item} not reset" if n % 2 else f"contact {item} about the invoice"
             for n, item in enumerate(i for items in PLANTED.values() for i in items)]
    lines = LOG + asked + ["card 4111 1111 1111 1112 is declined"]  # not Luhn-valid: kept
    (tmp_path / "asked.log").write_text("\n".join(lines) + "\n")
    return asked


def test_personal_data_is_replaced_in_candidates_and_groups_and_counted(tmp_path, capsys):
    asked = planted_log(tmp_path)
    assert mine_cli(tmp_path, "asked.log", "--out", "mined.jsonl", "--groups-out", "groups.jsonl", "--no-gold",
                    "--count", "100") == 0
    written = (tmp_path / "mined.jsonl").read_text() + (tmp_path / "groups.jsonl").read_text()
    for item in (i for items in PLANTED.values() for i in items):
        assert item not in written and normalise(item) not in written
    assert "4111 1111 1111 1112" in written
    out = capsys.readouterr().out
    counts = ", ".join(f"{len(items)} {kind}" for kind, items in PLANTED.items())
    assert f"personal data replaced by placeholders in {len(asked)} question(s): {counts}" in out


def test_keep_personal_data_keeps_them_as_typed(tmp_path, capsys):
    planted_log(tmp_path)
    assert mine_cli(tmp_path, "asked.log", "--out", "mined.jsonl", "--groups-out", "groups.jsonl", "--no-gold",
                    "--count", "100", "--keep-personal-data") == 0
    questions = read_candidates(str(tmp_path / "mined.jsonl"))
    assert any(PLANTED["emails"][0] in q for q in questions)
    assert "personal data kept as typed" in capsys.readouterr().out


def test_bad_lines_are_skipped_and_counted_or_fatal_with_strict(tmp_path, capsys):
    long = "why " * 2600  # over the gold set's 10,000 characters for a question
    raw = "\n".join(LOG).encode() + b"\nwhat is caf\xe9 lift\n" + long.encode() + b"\nwhat is drag\n"
    (tmp_path / "asked.log").write_bytes(raw)
    assert mine_cli(tmp_path, "asked.log", "--out", "mined.jsonl", "--no-gold") == 0
    out = capsys.readouterr().out
    bad_first = len(LOG) + 1
    assert f"2 bad line(s) skipped (first: line {bad_first}, not valid UTF-8)" in out
    assert f"{len(LOG) + 1} question(s) read" in out
    assert "what is drag" in read_candidates(str(tmp_path / "mined.jsonl"))
    assert mine_cli(tmp_path, "asked.log", "--out", "strict.jsonl", "--no-gold", "--strict") == 2
    assert f"asked.log:line {bad_first}" in capsys.readouterr().err and not (tmp_path / "strict.jsonl").exists()
