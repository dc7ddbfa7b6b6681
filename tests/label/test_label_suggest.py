"""Suggested grades from a chat-completions judge (the loopback stand-in), through the
session and the server, without a browser: what is asked, what the page is sent, what the
gold set gets, and a judge that fails."""

import http.client
import json

import pytest
from chat_standin import ChatStandIn

from ci_eval.gold.generators import ChatEndpoint
from ci_eval.label.server import TOKEN_HEADER, LabelServer
from ci_eval.label.session import Session, initial_pools
from ci_eval.label.store import GoldStore
from ci_eval.label.suggest import EndpointJudge, Suggester, default_prompt, parse_grade

TEXTS = {"y": "Yaks live in the mountains.", "z": "Zebras have stripes."}


def session_with(tmp_path, url, *, max_requests=50, key="sekret"):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": "q1", "question": "where do yaks live?", "gold": ["x"]}]}))
    store = GoldStore(gold)
    pools = initial_pools(store.read(), [{"q1": ["x", "y", "z"]}], depth=3)
    endpoint = ChatEndpoint(url, "judge-model", key, backoff=0.0, retries=1)
    suggester = Suggester(EndpointJudge(endpoint, default_prompt(), max_requests), log=lambda line: None)
    session = Session(store, pools, TEXTS, judge="Ann", clock=lambda: "T", suggester=suggester)
    session.start_suggestions()
    suggester.wait()
    return session, gold


def test_the_endpoint_judge_is_asked_once_a_chunk_and_its_grades_are_suggestions_only(tmp_path):
    with ChatStandIn() as chat:
        # A fenced answer and a busy server retried (Retry-After 0) are both taken.
        chat.script(("content", '{"grade": 3}'), ("status", 503, "busy", {"Retry-After": "0"}),
                    ("content", '```json\n{"grade": 0}\n```'))
        session, gold = session_with(tmp_path, chat.url)
        asked = [r.body for r in chat.requests]
    assert len(asked) == 3  # y, then z twice (the 503 retried)
    assert {b["model"] for b in asked} == {"judge-model"}
    assert chat.requests[0].headers["Authorization"] == "Bearer sekret"
    prompt = asked[0]["messages"][0]["content"]
    assert "Question:\nwhere do yaks live?" in prompt and "Passage:\nYaks live in the mountains." in prompt
    assert '{"grade": N}, with N from 0 to 3' in prompt
    state = session.state()
    assert state["questions"][0]["candidates"] == [
        {"id": "y", "text": TEXTS["y"], "mark": None, "suggested": 3},
        {"id": "z", "text": TEXTS["z"], "mark": None, "suggested": 0}]
    suggest = state["suggest"]
    assert (suggest["state"], suggest["asked"], suggest["wanted"], suggest["version"]) == ("done", 2, 2, 2)
    assert suggest["judge"] == f"endpoint {chat.url}/chat/completions model judge-model"
    assert suggest["agreement"]["pairs"] == 0 and suggest["agreement"]["kappa"] is None
    assert json.loads(gold.read_text())["questions"][0]["gold"] == ["x"]  # nothing written by the judge
    # The person grades y 3 (as suggested) and z 1 (suggested 0): each answer is a delta.
    session.handle("grade", {"question": "q1", "chunk": "y", "grade": 3, "seen": None})
    answer = session.handle("grade", {"question": "q1", "chunk": "z", "grade": 1, "seen": None})
    assert [c.get("suggested") for c in answer["questions"][0]["candidates"]] == [3, 0]
    assert "text" not in answer["questions"][0]["candidates"][0]
    # (3, 3) and (0, 1): po = 1/2; suggested 0 and 3 half each, given 1 and 3 half each;
    # pe = .5 * .5 (grade 3) = 1/4; kappa = (1/2 - 1/4) / (3/4) = 1/3.
    assert answer["suggest"]["agreement"]["kappa"] == pytest.approx(1 / 3, abs=1e-4)
    doc = json.loads(gold.read_text())
    assert doc["questions"][0]["gold"] == {"x": 1, "y": 3, "z": 1}
    chunks = doc["provenance"]["judgements"]["q1"]["chunks"]
    assert (chunks["y"]["suggested"], chunks["z"]["suggested"]) == (3, 0)
    assert doc["provenance"]["suggestions"]["judge"] == suggest["judge"]
    assert doc["provenance"]["suggestions"]["agreement"] == answer["suggest"]["agreement"]


def test_a_refusing_endpoint_leaves_grading_alone_and_says_why(tmp_path):
    with ChatStandIn() as chat:
        chat.script(("status", 401, "Incorrect API key provided", {}))
        session, gold = session_with(tmp_path, chat.url)
        assert len(chat.requests) == 1  # a 401 is not retried, and nothing more is asked
    suggest = session.state()["suggest"]
    assert suggest["state"] == "failed"
    assert suggest["problem"] == f"{chat.url}/chat/completions answered HTTP 401: Incorrect API key provided"
    session.handle("grade", {"question": "q1", "chunk": "y", "grade": 2, "seen": None})
    doc = json.loads(gold.read_text())
    assert doc["questions"][0]["gold"] == {"x": 1, "y": 2}
    assert "suggested" not in doc["provenance"]["judgements"]["q1"]["chunks"]["y"]


def test_the_request_budget_stops_the_judge(tmp_path):
    with ChatStandIn() as chat:
        chat.script(("content", '{"grade": 1}'))
        session, _ = session_with(tmp_path, chat.url, max_requests=1)
    state = session.state()
    assert state["suggest"]["state"] == "stopped"
    # The answer the budget paid for is kept; the chunk after it gets none.
    assert [c.get("suggested") for c in state["questions"][0]["candidates"]] == [1, None]


def test_an_answer_without_a_grade_is_a_failure_naming_the_chunk(tmp_path):
    with ChatStandIn() as chat:
        chat.script(("content", "I think it is quite relevant."))
        session, _ = session_with(tmp_path, chat.url)
    problem = session.state()["suggest"]["problem"]
    assert "the model's answer for chunk 'y' of 'q1'" in problem and "no JSON object" in problem


@pytest.mark.parametrize(("content", "grade"), [('{"grade": 2}', 2), ("3", 3), ('Grade: {"grade": 0}', 0),
                                                ("```\n{\"grade\": 1}\n```", 1)])
def test_grades_are_read_from_the_shapes_models_answer_in(content, grade):
    assert parse_grade(content) == grade


@pytest.mark.parametrize("content", ['{"grade": 4}', '{"grade": true}', '{"score": 1}', "relevant", "[2]"])
def test_anything_else_is_not_a_grade(content):
    from ci_eval.errors import InputError

    with pytest.raises(InputError):
        parse_grade(content)


def test_the_server_gives_new_suggestions_behind_the_token(tmp_path):
    with ChatStandIn() as chat:
        chat.script(("content", '{"grade": 2}'), ("content", '{"grade": 1}'))
        session, _ = session_with(tmp_path, chat.url)
    srv = LabelServer(session)
    srv.serve_in_thread()
    try:
        def get(path, token=srv.token):
            conn = http.client.HTTPConnection(*srv.server_address, timeout=10)
            conn.request("GET", path, headers={TOKEN_HEADER: token})
            response = conn.getresponse()
            body = json.loads(response.read())
            conn.close()
            return response.status, body

        status, body = get("/api/suggestions?since=1")
        assert status == 200 and body["suggestions"] == [["q1", "z", 1]] and body["version"] == 2
        assert get("/api/suggestions?since=0")[1]["suggestions"] == [["q1", "y", 2], ["q1", "z", 1]]
        assert get("/api/suggestions?since=-1")[0] == 400
        assert get("/api/suggestions?since=0", token="wrong")[0] == 403
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize(("args", "said"), [
    (["--suggest-endpoint", "http://127.0.0.1:9/v1"], "--suggest-endpoint needs --suggest-model"),
    (["--suggest-model", "m"], "go with --suggest-endpoint"),
    (["--suggest-command", "true", "--suggest-prompt", "p.txt"], "go with --suggest-endpoint"),
    (["--suggest-command", "true", "--suggest-max-requests", "0"], "--suggest-max-requests must be at least 1"),
])
def test_judge_options_that_cannot_work_are_refused_before_the_page_opens(tmp_path, args, said):
    import subprocess
    import sys

    from gold_cli import refused

    done = subprocess.run([sys.executable, "-m", "ci_eval", "label", "--no-browser", "--judge", "Ann", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert said in refused(done)[0]


def test_a_prompt_without_the_question_is_refused(tmp_path):
    import subprocess
    import sys

    from gold_cli import refused

    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": []}))
    (tmp_path / "prompt.txt").write_text("Grade this: {text}")
    done = subprocess.run([sys.executable, "-m", "ci_eval", "label", "--no-browser", "--judge", "Ann",
                           "--gold", "gold.json", "--pool", "run.trec", "--suggest-endpoint", "http://127.0.0.1:9/v1",
                           "--suggest-model", "m", "--suggest-prompt", "prompt.txt"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert refused(done) == ["prompt.txt: the prompt has no {question}"]


def test_a_kept_candidate_question_is_asked_about_too(tmp_path):
    from ci_eval.core.gold.candidates import candidate_id

    with ChatStandIn() as chat:
        chat.script(("content", '{"grade": 1}'), ("content", '{"grade": 2}'), ("content", '{"grade": 3}'),
                    ("content", '{"grade": 0}'))
        session, _ = session_with(tmp_path, chat.url)
        session.candidates = ["where are the zebras?"]
        session.retrieve = lambda qid, text: ["z", "w"]
        session.fetch_texts = lambda ids: {i: "Wolves howl." for i in ids if i == "w"}
        cid = candidate_id("where are the zebras?")
        answer = session.handle("keep", {"candidate": cid})
        assert answer["suggest"]["state"] in ("running", "done") and "agreement" not in answer["suggest"]
        session.suggester.wait()
        prompts = [r.body["messages"][0]["content"] for r in chat.requests]
    assert "Question:\nwhere are the zebras?" in prompts[2] and "Passage:\nZebras have stripes." in prompts[2]
    assert "Passage:\nWolves howl." in prompts[3] and len(prompts) == 4
    state = session.state()
    entry = {q["id"]: q for q in state["questions"]}[cid]
    # The same chunk under another question is asked again: suggestions are per (question, chunk).
    assert [(c["id"], c.get("suggested")) for c in entry["candidates"]] == [("z", 3), ("w", 0)]
    assert state["suggest"]["state"] == "done"


def test_the_label_command_s_log_line_is_one_write_with_its_newline(monkeypatch):
    import sys

    from streams import Writes

    from ci_eval.label import suggest

    stream = Writes()
    monkeypatch.setattr(sys, "stderr", stream)
    suggest.log_line("the judge refused: HTTP 401")
    # the suggester's thread and the server's log at once: a line must not be split by another
    assert stream.calls == ["ci-eval label: the judge refused: HTTP 401\n"]


KEY = "sk-proj-" + "Wx4" * 16


def _label_get(label, path):
    conn = http.client.HTTPConnection(*label.origin.removeprefix("http://").split(":"), timeout=30)
    try:
        conn.request("GET", path, headers={TOKEN_HEADER: label.token})
        return conn.getresponse().read().decode("utf-8")
    finally:
        conn.close()


def _failed_state(label) -> tuple[str, str]:
    """The page's /api/state and /api/suggestions once the judge has failed."""
    import time

    for _ in range(600):  # the judge fails on its first answer; this waits for the thread to say so
        state = _label_get(label, "/api/state")
        if json.loads(state)["suggest"]["state"] == "failed":
            return state, _label_get(label, "/api/suggestions?since=0")
        time.sleep(0.05)
    raise AssertionError(f"the judge never failed: {state}")


@pytest.mark.parametrize("answer, said", [
    (("status", 401, f"Invalid API key provided: Bearer {KEY}", {}), "answered HTTP 401: Invalid API key provided: Bearer ***"),
    (("redirect", 302, "ELSEWHERE"), "answered HTTP 302, a redirect to ELSEWHERE: not followed"),
], ids=["401-echoing-the-key", "redirect"])
def test_the_page_and_its_log_never_show_the_key_nor_send_it_elsewhere(tmp_path, monkeypatch, answer, said):
    from labelling import LabelProcess, write_project

    project = write_project(tmp_path)
    monkeypatch.setenv("JUDGE_KEY", KEY)
    with ChatStandIn() as chat, ChatStandIn() as elsewhere:
        there = elsewhere.url.removesuffix("/v1")
        chat.script(tuple(part.replace("ELSEWHERE", there) if isinstance(part, str) else part for part in answer))
        label = LabelProcess(project, "--chunks", "chunks.jsonl", "--suggest-endpoint", chat.url,
                             "--suggest-model", "judge", "--suggest-key-env", "JUDGE_KEY")
        try:
            state, suggestions = _failed_state(label)
        finally:
            err = label.kill()
    assert chat.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert elsewhere.requests == [] and len(chat.requests) == 1
    said = said.replace("ELSEWHERE", there)
    assert said in json.loads(state)["suggest"]["problem"] and said in json.loads(suggestions)["problem"]
    assert f"no suggestions: {chat.url}/chat/completions {said}" in err
    for shown in (state, suggestions, err):
        assert KEY not in shown and KEY[:12] not in shown


SHOW_ENV = """
import json, os, sys
names = sorted(k for k in os.environ if k.upper() in ("GITHUB_TOKEN", "GH_TOKEN", "INPUT_GITHUB-TOKEN", "KEPT_SETTING"))
with open("judge-env.json", "w") as fh:
    json.dump(names, fh)
for line in sys.stdin:
    print(json.dumps({"chunk": json.loads(line)["chunk"], "grade": 1}))
"""


def test_a_judge_command_gets_the_environment_without_github_s_secrets(tmp_path, monkeypatch):
    import sys
    import time

    from labelling import LabelProcess, write_project

    project = write_project(tmp_path)
    (project / "show_env.py").write_text(SHOW_ENV)
    for name, value in {"GITHUB_TOKEN": "ghs_1", "GH_TOKEN": "ghp_2", "INPUT_GITHUB-TOKEN": "ghs_3",
                        "KEPT_SETTING": "1"}.items():
        monkeypatch.setenv(name, value)
    label = LabelProcess(project, "--chunks", "chunks.jsonl", "--suggest-command", f"{sys.executable} show_env.py")
    try:
        for _ in range(600):
            if (project / "judge-env.json").exists() and json.loads(_label_get(label, "/api/state"))["suggest"][
                    "state"] == "done":
                break
            time.sleep(0.05)
    finally:
        label.kill()
    assert json.loads((project / "judge-env.json").read_text()) == ["KEPT_SETTING"]
