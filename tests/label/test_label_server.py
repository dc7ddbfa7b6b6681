"""The label server over real HTTP on loopback, without a browser: token, Host, bodies."""

import http.client
import json
import socket
import threading

import pytest

from ci_eval.label.server import CSP, MAX_BODY, TOKEN_HEADER, LabelServer
from ci_eval.label.session import Session, initial_pools
from ci_eval.label.store import GoldStore


@pytest.fixture
def server(tmp_path):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": ["x"]}]}))
    store = GoldStore(gold)
    pools = initial_pools(store.read(), [{"q1": ["x", "y", "z"]}], depth=2)
    srv = LabelServer(Session(store, pools, {"y": "why"}, judge="Ann", clock=lambda: "T"))
    srv.serve_in_thread()
    yield srv
    srv.shutdown()
    srv.server_close()


def request(srv, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection(*srv.server_address, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response, data


def test_the_page_and_the_api_need_the_token(server):
    response, _ = request(server, "GET", "/")
    assert response.status == 403
    response, _ = request(server, "GET", "/?t=wrong")
    assert response.status == 403
    response, _ = request(server, "GET", "/api/state", headers={TOKEN_HEADER: "wrong"})
    assert response.status == 403
    response, html = request(server, "GET", f"/?t={server.token}")
    assert response.status == 200
    assert response.getheader("Content-Security-Policy") == CSP
    assert response.getheader("Referrer-Policy") == "no-referrer"
    assert f'content="{server.token}"' in html.decode()


def test_a_foreign_host_header_is_refused(server):
    response, _ = request(server, "GET", f"/?t={server.token}", headers={"Host": "evil.example:80"})
    assert response.status == 403


def test_the_state_is_the_pool_minus_what_is_judged(server):
    response, data = request(server, "GET", "/api/state", headers={TOKEN_HEADER: server.token})
    state = json.loads(data)
    assert [c["id"] for c in state["questions"][0]["candidates"]] == ["y"]  # x is judged, z below depth 2
    assert state["questions"][0]["earlier"] == 1  # x, judged before this session
    assert state["progress"] == {"judged": 1, "to_judge": 1}


@pytest.mark.parametrize(("body", "headers", "message"), [
    (b"{", {}, "invalid JSON"),
    (b"x" * (MAX_BODY + 1), {}, "limit"),
    (json.dumps({"question": "q1", "chunk": "y", "grade": 7}).encode(), {}, "0 to 3"),
    (json.dumps({"question": "q1", "chunk": "y", "grade": 1, "extra": 1}).encode(), {}, "unexpected field"),
    (b"{}", {"Content-Type": "text/plain"}, "application/json"),
    (json.dumps({"question": "q1", "chunk": "z", "grade": 1}).encode(), {}, "not in the pool"),
    (json.dumps({"question": "q9", "chunk": "y", "grade": 1}).encode(), {}, "not in this session"),
])
def test_bad_bodies_are_refused_and_nothing_is_written(server, body, headers, message):
    before = server.session.store.path.read_bytes()
    response, data = request(server, "POST", "/api/grade", body=body,
                             headers={TOKEN_HEADER: server.token, "Content-Type": "application/json", **headers})
    assert response.status == 400
    assert message in json.loads(data)["error"]
    assert server.session.store.path.read_bytes() == before


def test_a_grade_is_on_disk_when_the_answer_comes_back(server):
    body = json.dumps({"question": "q1", "chunk": "y", "grade": 0, "seen": None}).encode()
    response, data = request(server, "POST", "/api/grade", body=body,
                             headers={TOKEN_HEADER: server.token, "Content-Type": "application/json"})
    assert response.status == 200
    # The answer is the one question it changed, marks only: the page has the texts already.
    assert json.loads(data) == {"questions": [{"id": "q1", "question": "a?", "pending": False, "unanswerable": False,
                                               "earlier": 1, "candidates": [{"id": "y", "mark": 0}]}]}
    on_disk = json.loads(server.session.store.path.read_text())
    assert on_disk["questions"][0]["gold"] == {"x": 1, "y": 0}
    assert on_disk["provenance"]["judgements"]["q1"]["chunks"]["y"] == {"grade": 0, "by": "Ann", "at": "T"}
    # The same chunk from a page that still shows it unjudged, with another grade: a conflict.
    body = json.dumps({"question": "q1", "chunk": "y", "grade": 3, "seen": None}).encode()
    response, data = request(server, "POST", "/api/grade", body=body,
                             headers={TOKEN_HEADER: server.token, "Content-Type": "application/json"})
    assert response.status == 409
    assert json.loads(data)["questions"][0]["candidates"] == [{"id": "y", "mark": 0}]


def test_answers_on_a_kept_alive_connection_are_not_held_back_by_nagle(server):
    """The page keeps its connection open, and an answer is written as headers, then body:
    with Nagle's algorithm on, the body would wait for the browser's delayed ACK of the
    headers (40 ms a key on Linux, measured by benchmarks/bench_label.py). Every socket the
    server answers on has it off."""
    delays, closed = [], threading.Event()
    answer = server.finish_request

    def spy(sock, address):
        answer(sock, address)  # returns when the client closes the connection
        delays.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        closed.set()

    server.finish_request = spy
    conn = http.client.HTTPConnection(*server.server_address, timeout=10)
    for _ in range(3):
        conn.request("GET", "/api/state", headers={TOKEN_HEADER: server.token})
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["questions"]
    conn.close()
    assert closed.wait(10)
    assert delays == [1]


MALFORMED = [
    (b'{"question": ' + b"[" * 30000 + b"]" * 30000 + b"}", "nested too deeply"),
    (b'{"question": "q1", "chunk": "beta", "grade": null, "seen": null, "note": "half \\ud800 a pair"}',
     "without its pair"),
    (b'{"question": "q1", "text": "alpha \\udc00 please"}', "without its pair"),
    (b'{"question": "q1", "text": "alpha \xed\xa0\x80 please"}', "not UTF-8"),
    (b'{"question": "q1", "question": "q2", "text": "x"}', "appears twice"),
]


def test_malformed_bodies_to_the_real_process_get_a_reason_and_one_line_each(tmp_path):
    from labelling import LabelProcess, post, write_project

    project = write_project(tmp_path)
    before = (project / "gold.json").read_bytes()
    label = LabelProcess(project, "--chunks", "chunks.jsonl")
    try:
        answers = [post(label, "/api/edit" if b'"text"' in body else "/api/grade", body) for body, _ in MALFORMED]
        # Still serving after all of them.
        assert post(label, "/api/grade", {"question": "q1", "chunk": "beta", "grade": 1, "seen": None})[0] == 200
    finally:
        err = label.kill()
    for (status, data), (_, reason) in zip(answers, MALFORMED):
        assert status == 400 and reason in data["error"], (status, data)
    lines = [line for line in err.splitlines() if line.startswith("ci-eval label: refused")]
    assert len(lines) == len(MALFORMED)
    assert "Traceback" not in err
    assert json.loads(before)["questions"][0]["gold"] == ["alpha"]
    assert json.loads((project / "gold.json").read_text())["questions"][0]["gold"] == {"alpha": 1, "beta": 1}


@pytest.mark.parametrize("taken", [True, False])
def test_a_port_in_use_or_out_of_range_is_a_usage_error_with_its_reason(tmp_path, taken):
    import os
    import subprocess
    import sys

    from labelling import write_project
    from suite_paths import SUPPORT

    project = write_project(tmp_path)
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1] if taken else 70000
    try:
        done = subprocess.run([sys.executable, "-m", "ci_eval", "label", "--no-browser", "--judge", "Ann",
                               "--chunks", "chunks.jsonl", "--port", str(port)], cwd=project, capture_output=True,
                              text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(SUPPORT)})
    finally:
        holder.close()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert ("in use" if taken else "0 (a free one) to 65535") in done.stderr
    assert str(port) in done.stderr


@pytest.fixture
def span_server(tmp_path):
    """A pool of three chunks: y placed at 100 in notes.md (its text shown from 4 on, after a
    heading), n not placed, and z outside the pool."""
    from ci_eval.label.sources import Place, Texts

    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": ["x"]}]}))
    store = GoldStore(gold)
    texts = Texts({"y": "Yy\n\nYaks live high.", "n": "no place"},
                  {"y": Place("notes.md", 100, len("Yaks live high."), at=4), "n": "no doc given"})
    srv = LabelServer(Session(store, {"q1": ("y", "n")}, texts, judge="Ann", clock=lambda: "T"))
    srv.serve_in_thread()
    yield srv, gold
    srv.shutdown()
    srv.server_close()


def post_span(srv, **body):
    response, data = request(srv, "POST", "/api/span", body=json.dumps(body).encode(),
                             headers={TOKEN_HEADER: srv.token, "Content-Type": "application/json"})
    return response.status, json.loads(data)


@pytest.mark.parametrize("body, reason", [
    ({"chunk": "y", "start": 3, "end": 8, "grade": 2}, "not inside the chunk's document text (4..19)"),
    ({"chunk": "y", "start": 10, "end": 20, "grade": 2}, "not inside the chunk's document text (4..19)"),
    ({"chunk": "y", "start": 9, "end": 9, "grade": 2}, "the selection is empty"),
    ({"chunk": "y", "start": 9, "end": 5, "grade": 2}, "the selection is empty"),
    ({"chunk": "y", "start": -1, "end": 5, "grade": 2}, "request:start: must be a whole number"),
    ({"chunk": "y", "start": 4, "end": 8, "grade": 0}, "a span is evidence: must be an integer from 1 to 3"),
    ({"chunk": "y", "start": 4, "end": 8, "grade": 4}, "a span is evidence"),
    ({"chunk": "y", "start": 4, "end": 8, "grade": True}, "a span is evidence"),
    ({"chunk": "z", "start": 4, "end": 8, "grade": 2}, "chunk 'z' is not in the pool of 'q1'"),
    ({"chunk": "n", "start": 0, "end": 2, "grade": 2}, "no span can be recorded in 'n': no doc given"),
    ({"chunk": "y", "start": 4, "end": 8, "grade": 2, "doc": "other.md"}, "unexpected field 'doc'"),
])
def test_a_span_out_of_range_empty_misgraded_or_unplaced_is_refused_and_nothing_is_written(span_server, body, reason):
    srv, gold = span_server
    before = gold.read_bytes()
    status, data = post_span(srv, question="q1", **body)
    assert status == 400 and reason in data["error"]
    assert gold.read_bytes() == before


def test_a_span_needs_the_token_and_a_known_question(span_server):
    srv, gold = span_server
    before = gold.read_bytes()
    body = json.dumps({"question": "q1", "chunk": "y", "start": 4, "end": 8, "grade": 2}).encode()
    response, _ = request(srv, "POST", "/api/span", body=body, headers={"Content-Type": "application/json"})
    assert response.status == 403
    response, _ = request(srv, "POST", "/api/span", body=body, headers={
        TOKEN_HEADER: srv.token, "Content-Type": "application/json", "Host": "evil.example:80"})
    assert response.status == 403
    status, data = post_span(srv, question="q9", chunk="y", start=4, end=8, grade=2)
    assert status == 400 and "question 'q9' is not in this session" in data["error"]
    assert gold.read_bytes() == before


def test_a_span_maps_to_document_offsets_and_is_regraded_not_repeated(span_server):
    srv, gold = span_server
    status, data = post_span(srv, question="q1", chunk="y", start=4, end=8, grade=2)  # "Yaks"
    assert status == 200
    assert data["questions"][0]["candidates"][0]["spans"] == [{"start": 4, "end": 8, "grade": 2}]
    assert post_span(srv, question="q1", chunk="y", start=4, end=8, grade=3)[0] == 200
    doc = json.loads(gold.read_text())
    assert doc["questions"][0]["evidence"] == [{"doc": "notes.md", "start": 100, "end": 104, "grade": 3}]
    assert doc["provenance"]["judgements"]["q1"]["spans"] == [
        {"doc": "notes.md", "start": 100, "end": 104, "grade": 3, "chunk": "y", "by": "Ann", "at": "T"}]
    response, data = request(srv, "GET", "/api/state", headers={TOKEN_HEADER: srv.token})
    y, n = json.loads(data)["questions"][0]["candidates"]
    assert y["place"] == {"doc": "notes.md", "start": 100, "length": 15, "at": 4}
    assert y["spans"] == [{"start": 4, "end": 8, "grade": 3}] and n["no_span"] == "no doc given"
