"""The one client every model endpoint gets (gold/model_http.py), through `ci-eval gold
generate` in a process of its own against loopback endpoints of the tests' own: redirects,
the deadline of a whole answer, messages without the key, and what a broken server or model
can send (a cut connection, bytes that are not HTTP, half a surrogate pair, an over-long
question, nothing but 503)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chat_standin import ChatStandIn
from gold_cli import refused
from raw_endpoint import RawEndpoint, cut_mid_answer, cut_mid_chunk, not_http, trickle

from ci_eval import schemas
from ci_eval.label.sources import read_candidates

# the gold set's own bound on a question, which the candidates file is held to
MAX_QUESTION = schemas.load("goldset")["$defs"]["question"]["properties"]["question"]["maxLength"]

KEY = "sk-proj-" + "Zq7" * 16  # what a hosted API's key looks like
TEXT = {"wings#0": "Lift grows with the angle of attack until the flow separates and the wing stalls.",
        "heat#0": "Conduction through a composite slab depends on each layer's thermal conductivity."}


def project(tmp_path: Path) -> Path:
    entries = [{"id": cid, "doc": cid.split("#")[0], "text": text} for cid, text in TEXT.items()]
    (tmp_path / "index.jsonl").write_text("\n".join(map(json.dumps, entries)) + "\n")
    return tmp_path


def generate(tmp_path: Path, url: str, *args: str, key: str | None = KEY, timeout: float = 60):
    """`ci-eval gold generate` as a process, its key in MODEL_KEY (none when ``key`` is None)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MODEL_KEY")}
    if key:
        env["MODEL_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "ci_eval", "gold", "generate", "--manifest", "index.jsonl", "--no-gold",
         "--endpoint", url, "--model", "m1", "--key-env", "MODEL_KEY", "--out", "gen.jsonl", *args],
        cwd=project(tmp_path), env=env, capture_output=True, text=True, timeout=timeout)


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ------------------------------------------------------------------------- redirects

@pytest.mark.parametrize("code", [302, 307])
def test_a_redirect_is_refused_and_its_target_gets_neither_key_nor_text(tmp_path, code):
    with ChatStandIn() as api, ChatStandIn() as elsewhere:
        api.script(("redirect", code, f"{elsewhere.url}/chat/completions"))
        done = generate(tmp_path, api.url, "--count", "1")
    assert elsewhere.requests == [] and len(api.requests) == 1  # followed nowhere, not retried
    assert api.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    origin = elsewhere.url.removesuffix("/v1")
    [line] = refused(done)
    assert f"answered HTTP {code}, a redirect to {origin}: not followed" in line
    assert not (tmp_path / "gen.jsonl").exists()


# ------------------------------------------------------------------------- the key

def test_an_error_body_echoing_the_key_prints_no_key(tmp_path):
    with ChatStandIn() as api:
        api.script(("status", 401, f"Invalid API key provided: Bearer {KEY}. You can find your key at "
                    "https://platform.example/keys", {}))
        done = generate(tmp_path, api.url, "--count", "1")
    [line] = refused(done)
    assert "HTTP 401: Invalid API key provided: Bearer ***. You can find" in line
    assert KEY not in done.stderr + done.stdout and KEY[:12] not in done.stderr


def test_the_key_cut_by_the_message_s_length_leaves_no_part_behind(tmp_path):
    # the key straddles the 200th character of the API's message: scrubbed before the cut
    with ChatStandIn() as api:
        api.script(("status", 401, "x" * 190 + f" {KEY} tail", {}))
        done = generate(tmp_path, api.url, "--count", "1")
    [line] = refused(done)
    assert KEY[:8] not in line and "***" in line


# ------------------------------------------------------------------------- the deadline

@pytest.mark.parametrize("headers_too", [False, True], ids=["body", "status-line-and-headers"])
def test_a_trickling_endpoint_is_left_at_the_timeout_of_the_whole_answer(tmp_path, headers_too):
    # One byte every 0.2 s never lets a read wait 1 s: a per-read timeout would wait for the
    # million announced bytes (days). The whole answer's deadline ends it, and it is not
    # retried (it would be as late again).
    with RawEndpoint(trickle(0.2, headers_too=headers_too)) as api:
        done = generate(tmp_path, api.url, "--count", "1", "--timeout", "1", "--retries", "3", "--backoff", "0",
                        timeout=45)
    [line] = refused(done)
    assert "no complete answer from" in line and "within 1 s (the whole answer, not each read" in line
    assert api.requests == 1 and not (tmp_path / "gen.jsonl").exists()


# ------------------------------------------------------------------------- broken servers

@pytest.mark.parametrize("behaviour", [cut_mid_answer, cut_mid_chunk], ids=["content-length", "chunked"])
def test_a_connection_cut_mid_answer_is_retried_then_named(tmp_path, behaviour):
    with RawEndpoint(behaviour) as api:
        done = generate(tmp_path, api.url, "--count", "1", "--retries", "1", "--backoff", "0")
    [line] = refused(done)
    assert "cut the connection mid-answer" in line and "(after 2 attempts" in line
    assert api.requests == 2


def test_bytes_that_are_not_http_are_named_and_not_retried(tmp_path):
    with RawEndpoint(not_http) as api:
        done = generate(tmp_path, api.url, "--count", "1", "--retries", "3", "--backoff", "0")
    [line] = refused(done)
    assert "answered bytes that are not HTTP" in line and api.requests == 1


def test_an_endpoint_answering_only_503_fails_naming_it_never_a_clean_stop(tmp_path):
    with ChatStandIn() as api:
        api.script(*[("status", 503, "The engine is currently overloaded", {})] * 10)
        done = generate(tmp_path, api.url, "--count", "2", "--max-requests", "3", "--retries", "4",
                        "--backoff", "0")
    [line] = refused(done)
    assert "answered HTTP 503: The engine is currently overloaded" in line
    assert "the request budget ran out after 3 attempt(s)" in line and len(api.requests) == 3
    assert not (tmp_path / "gen.jsonl").exists()


def test_an_answer_over_the_size_bound_is_refused_not_held(tmp_path):
    from ci_eval.gold.model_http import MAX_ANSWER_BYTES

    with ChatStandIn() as api:
        api.script(("raw", b" " * MAX_ANSWER_BYTES + b"{}"))
        done = generate(tmp_path, api.url, "--count", "1", "--retries", "2", "--backoff", "0")
    [line] = refused(done)
    assert f"announced an answer of {MAX_ANSWER_BYTES + 2:,} bytes, over the {MAX_ANSWER_BYTES:,}-byte bound" in line
    assert len(api.requests) == 1


# ------------------------------------------------------------------------- what a model writes

LONE = "\ud83d"  # the first half of 😀's surrogate pair, alone


@pytest.mark.parametrize("content", [
    json.dumps({"questions": [f"why do wings stall {LONE}"]}, ensure_ascii=True),  # an escape in the answer's JSON
    '{"questions": ["why do wings stall ' + LONE + '"]}',  # the completion's own JSON carries it
], ids=["escape-in-the-answer", "in-the-completion"])
def test_half_a_surrogate_pair_in_an_answer_is_mended_and_so_is_a_cached_one(tmp_path, content):
    with ChatStandIn() as api:
        api.script(("content", content))
        done = generate(tmp_path, api.url, "--count", "1")
        assert done.returncode == 0, done.stderr
        [row] = rows(tmp_path / "gen.jsonl")
        assert row["question"] == "why do wings stall \ufffd"
        assert read_candidates(str(tmp_path / "gen.jsonl")) == [row["question"]]
        # A cache an earlier version wrote with the lone half in it: a re-run reads it, asks nothing.
        cache = tmp_path / "gen.jsonl.cache.jsonl"
        [entry] = rows(cache)
        cache.write_text(json.dumps({**entry, "questions": [f"why do wings stall {LONE}"]}) + "\n")
        again = generate(tmp_path, api.url, "--count", "1", "--force")
    assert again.returncode == 0, again.stderr
    assert len(api.requests) == 1 and rows(tmp_path / "gen.jsonl") == [row]


def test_an_answer_nested_thousands_deep_is_malformed_not_a_crash(tmp_path):
    with ChatStandIn() as api:
        api.script(("content", "[" * 100_000))
        done = generate(tmp_path, api.url, "--count", "1")
    [line] = refused(done)
    assert "is malformed: the answer's JSON is nested too deeply" in line


def test_an_over_long_question_is_dropped_and_counted_and_the_file_stays_readable(tmp_path):
    long = "why " + "really " * (MAX_QUESTION // 7) + "?"
    assert len(long) > MAX_QUESTION
    with ChatStandIn() as api:
        api.script(("content", json.dumps({"questions": [long, "how does a flap raise lift"]})))
        done = generate(tmp_path, api.url, "--count", "1", "--per-chunk", "2")
    assert done.returncode == 0, done.stderr
    assert "1 candidate(s) from 1 chunk(s)" in done.stdout
    assert f"1 dropped (longer than {MAX_QUESTION:,} characters)" in done.stdout
    assert read_candidates(str(tmp_path / "gen.jsonl")) == ["how does a flap raise lift"]


# ------------------------------------------------------------------------- the generator command

SHOW_ENV = """
import json, os, sys
names = sorted(k for k in os.environ if k.upper() in ("GITHUB_TOKEN", "GH_TOKEN", "INPUT_GITHUB-TOKEN",
               "ACTIONS_RUNTIME_TOKEN", "MODEL_KEY", "KEPT_SETTING"))
for line in sys.stdin:
    chunk = json.loads(line)
    print(json.dumps({"chunk": chunk["id"], "question": "what does the generator see: " + " ".join(names)}))
"""


def test_a_generator_command_gets_the_environment_without_github_s_secrets(tmp_path):
    (tmp_path / "show_env.py").write_text(SHOW_ENV)
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "GITHUB_TOKEN": "ghs_secret1",
           "GH_TOKEN": "ghp_secret2", "INPUT_GITHUB-TOKEN": "ghs_secret3", "ACTIONS_RUNTIME_TOKEN": "x",
           "MODEL_KEY": "sk-the-generator-may-need-it", "KEPT_SETTING": "1"}
    done = subprocess.run([sys.executable, "-m", "ci_eval", "gold", "generate", "--manifest", "index.jsonl",
                           "--no-gold", "--command", f"{sys.executable} show_env.py", "--count", "1",
                           "--out", "gen.jsonl"], cwd=project(tmp_path), env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    [row] = rows(tmp_path / "gen.jsonl")
    # the user's own settings (a model key the command may use) stay; GitHub's token does not
    assert row["question"] == "what does the generator see: KEPT_SETTING MODEL_KEY"
