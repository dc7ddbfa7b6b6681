"""`ci-eval gold generate` against a loopback chat-completions API and a real command."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest
from chat_standin import ChatStandIn, question_for

from ci_eval.cli import main
from ci_eval.label.sources import read_candidates

DOCS = {
    "wings": ["Lift grows with the angle of attack until the flow separates and the wing stalls.",
              "Flaps change the camber of the airfoil and raise the maximum lift coefficient."],
    "heat": ["Conduction through a composite slab depends on each layer's thermal conductivity.",
             "Radiation cooling of a nozzle wall limits its temperature at high chamber pressure."],
    "panels": ["Supersonic panel flutter appears above a critical dynamic pressure.",
               "Buckled panels flutter at lower dynamic pressure than flat ones."],
}


def manifest(tmp_path: Path) -> Path:
    entries = [{"id": f"{doc}#{i}", "doc": doc, "text": text}
               for doc, texts in DOCS.items() for i, text in enumerate(texts)]
    path = tmp_path / "index.jsonl"
    path.write_text("\n".join([json.dumps({"version": "v1"}), *map(json.dumps, entries)]) + "\n")
    return path


TEXT = {f"{doc}#{i}": t for doc, texts in DOCS.items() for i, t in enumerate(texts)}


def gen(tmp_path: Path, *args: str) -> int:
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        return main(["gold", "generate", "--manifest", str(manifest(tmp_path)), "--no-gold", *args])
    finally:
        os.chdir(here)


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_questions_from_chunks_of_every_document_each_proposing_its_chunk(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MY_KEY", "sk-test")
    with ChatStandIn() as api:
        assert gen(tmp_path, "--endpoint", api.url, "--model", "m1", "--key-env", "MY_KEY", "--count", "3",
                   "--out", "gen.jsonl") == 0
    got = rows(tmp_path / "gen.jsonl")
    assert len(api.requests) == 3 and len(got) == 3
    assert {r["source"].split("#")[0] for r in got} == set(DOCS)  # one chunk of each document
    for r, req in zip(got, api.requests):
        assert r["question"] == question_for(TEXT[r["source"]]) and r["proposed"] == {r["source"]: 2}
        assert req.body["model"] == "m1" and TEXT[r["source"]] in req.body["messages"][0]["content"]
        assert req.headers["Authorization"] == "Bearer sk-test"
    assert read_candidates(str(tmp_path / "gen.jsonl")) == [r["question"] for r in got]
    assert "3 candidate(s) from 3 chunk(s) (3 asked, 0 from the cache" in capsys.readouterr().out


def test_a_rerun_asks_nothing_twice(tmp_path):
    with ChatStandIn() as api:
        assert gen(tmp_path, "--endpoint", api.url, "--model", "m1", "--count", "4", "--out", "gen.jsonl") == 0
        first = (tmp_path / "gen.jsonl").read_text()
        assert gen(tmp_path, "--endpoint", api.url, "--model", "m1", "--count", "4", "--out", "gen.jsonl",
                   "--force") == 0
    assert len(api.requests) == 4 and (tmp_path / "gen.jsonl").read_text() == first
    assert "Authorization" not in api.requests[0].headers  # no key in the environment: none sent


def test_an_error_answer_is_one_line_with_the_apis_message_and_nothing_written(tmp_path, capsys):
    with ChatStandIn() as api:
        api.script(("status", 401, "Incorrect API key provided", {}))
        assert gen(tmp_path, "--endpoint", api.url, "--model", "m1", "--out", "gen.jsonl") == 2
    err = capsys.readouterr().err
    assert "HTTP 401: Incorrect API key provided" in err and err.count("\n") == 1
    assert not (tmp_path / "gen.jsonl").exists() and len(api.requests) == 1  # a 401 is not retried


@pytest.mark.parametrize("entry, said", [
    (("content", "Sure! Here are some questions: 1. what"), "no JSON in the answer"),
    (("content", '{"questions": "what is lift"}'), 'expected {"questions"'),
    (("raw", b"<html>gateway</html>"), "not a chat completion"),
])
def test_a_malformed_answer_is_a_clear_error(tmp_path, capsys, entry, said):
    with ChatStandIn() as api:
        api.script(entry)
        assert gen(tmp_path, "--endpoint", api.url, "--model", "m1", "--out", "gen.jsonl") == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and not (tmp_path / "gen.jsonl").exists()


def test_an_unreachable_endpoint_is_a_clear_error(tmp_path, capsys):
    with socket.socket() as s:  # a port nobody listens on once this closes
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert gen(tmp_path, "--endpoint", f"http://127.0.0.1:{port}/v1", "--model", "m1", "--retries", "1",
               "--backoff", "0", "--out", "gen.jsonl") == 2
    err = capsys.readouterr().err
    assert f"cannot reach http://127.0.0.1:{port}/v1/chat/completions" in err and "after 2 attempts" in err


def test_the_request_budget_stops_the_run_and_keeps_what_it_paid_for(tmp_path, capsys):
    with ChatStandIn() as api:
        assert gen(tmp_path, "--endpoint", api.url, "--model", "m1", "--count", "5", "--max-requests", "2",
                   "--out", "gen.jsonl") == 0
        assert len(api.requests) == 2 and len(rows(tmp_path / "gen.jsonl")) == 2
        assert "stopped at --max-requests 2" in capsys.readouterr().out
        assert gen(tmp_path, "--endpoint", api.url, "--model", "m1", "--count", "5", "--out", "gen.jsonl",
                   "--force") == 0
    assert len(api.requests) == 5  # the first two came from the cache


GENERATOR = """
import json, sys
for line in sys.stdin:
    chunk = json.loads(line)
    words = chunk["text"].split()
    if chunk["id"] == "wings#0":   # copies its chunk
        print(json.dumps({"chunk": chunk["id"], "question": " ".join(words[:8]) + "?"}))
    elif chunk["id"] == "heat#0":  # the same question twice
        print(json.dumps({"chunk": chunk["id"], "questions": ["how do slabs conduct heat", "How do slabs conduct heat?"]}))
    else:
        print(json.dumps({"chunk": chunk["id"], "question": "tell me about " + words[0].lower() + " " + chunk["doc"]}))
"""


def test_a_command_generator_and_the_screen_before_a_person(tmp_path, capsys):
    (tmp_path / "make_questions.py").write_text(GENERATOR)
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": "q1", "question": "Tell me about flaps wings", "gold": ["wings#1"]}]}))
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = main(["gold", "generate", "--manifest", str(manifest(tmp_path)), "--gold", "gold.json", "--command",
                     f"{sys.executable} make_questions.py", "--count", "6", "--per-chunk", "2", "--out", "gen.jsonl"])
    finally:
        os.chdir(here)
    assert code == 0
    got = {r["source"]: r["question"] for r in rows(tmp_path / "gen.jsonl")}
    # wings#0 copied, wings#1 near the gold set's question, heat#0's second a repeat
    assert set(got) == set(TEXT) - {"wings#0", "wings#1"} and got["heat#0"] == "how do slabs conduct heat"
    out = capsys.readouterr().out
    assert "1 dropped (copies its chunk)" in out and "1 dropped (near a gold question)" in out
    assert "1 dropped (near-duplicate)" in out


def test_a_failing_command_is_one_line_with_its_last_words(tmp_path, capsys):
    (tmp_path / "bad.py").write_text("import sys\nprint('model not loaded', file=sys.stderr)\nsys.exit(3)\n")
    assert gen(tmp_path, "--command", f"{sys.executable} bad.py", "--out", "gen.jsonl") == 2
    err = capsys.readouterr().err
    assert "the generator exited with 3: model not loaded" in err and not (tmp_path / "gen.jsonl").exists()


def test_each_generated_candidate_carries_its_origin_and_a_keep_records_it(tmp_path):
    import hashlib

    from ci_eval.core.gold.candidates import apply_keep, candidate_id
    from ci_eval.core.gold.judgement import Stamp
    from ci_eval.label.sources import candidate_origins

    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Write {count} questions a user would ask about: {text}")
    with ChatStandIn() as api:
        assert gen(tmp_path, "--endpoint", api.url, "--model", "m1", "--count", "2", "--prompt", str(prompt),
                   "--out", "gen.jsonl") == 0
    version = "sha256:" + hashlib.sha256(prompt.read_text().encode()).hexdigest()[:12]
    got = rows(tmp_path / "gen.jsonl")
    assert got and all(r["origin"] == {"kind": "generated", "model": "m1", "prompt": version, "source": r["source"]}
                       for r in got)
    origins = candidate_origins(str(tmp_path / "gen.jsonl"))
    first = got[0]
    kept = apply_keep({"schema_version": 1, "questions": []}, first["question"], Stamp("Ann", "T"),
                      origins[candidate_id(first["question"])])
    assert kept["provenance"]["judgements"][candidate_id(first["question"])]["origin"] == first["origin"]
