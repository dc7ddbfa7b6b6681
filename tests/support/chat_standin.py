"""A loopback stand-in of an OpenAI-compatible chat-completions API: real HTTP on 127.0.0.1,
recorded requests, scripted faults, in the published shapes.

``POST /v1/chat/completions`` takes ``{"model", "messages": [{"role", "content"}], ...}``
and answers ``{"id", "object": "chat.completion", "created", "model", "choices": [{"index",
"message": {"role": "assistant", "content"}, "finish_reason"}], "usage"}``. Errors carry
``{"error": {"message", "type", "param", "code"}}``, as the API documents them; a 429 or 503
may carry ``Retry-After``. Without a script, the answer is ``{"questions": [...]}`` made
from the passage's words (``question_for``), so a test can derive what it expects.

Faults are queued with ``script(...)``: each request takes the next entry, then the default
answer resumes. An entry is ``("status", code, message, headers)``, ``("content", text)``
(a completion whose message content is ``text``), ``("raw", bytes)`` (a body that is no
completion at all) or ``("redirect", code, location)``. Every request is recorded, whatever
its method (a client following a 302 comes back with a GET).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PASSAGE = re.compile(r"Passage:\n(.*)\Z", re.S)
WORDS = re.compile(r"[a-z]{4,}")


def question_for(passage: str) -> str:
    """The stand-in's question for a passage: its first three long words asked about."""
    words = WORDS.findall(passage.lower())[:3]
    return f"what about {' '.join(words)}?"


@dataclass
class Recorded:
    path: str
    headers: dict
    body: dict | None
    method: str = "POST"


@dataclass
class ChatStandIn:
    requests: list[Recorded] = field(default_factory=list)
    queue: list[tuple] = field(default_factory=list)

    def script(self, *entries: tuple) -> None:
        self.queue.extend(entries)

    def __enter__(self) -> ChatStandIn:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet test output
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                stand_in.requests.append(Recorded(self.path, dict(self.headers), body))
                stand_in._answer(self, body)

            def do_GET(self):
                stand_in.requests.append(Recorded(self.path, dict(self.headers), None, "GET"))
                stand_in._error(self, 405, f"Method not allowed: GET {self.path}", "invalid_request_error")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        # shutdown() waits for the loop's next poll: half a second at the default interval
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _send(self, handler, status: int, payload: bytes, headers: dict | None = None) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(payload)

    def _answer(self, handler, body) -> None:
        if handler.path != "/v1/chat/completions":
            return self._error(handler, 404, f"Unknown request URL: POST {handler.path}", "invalid_request_error")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or "model" not in body:
            return self._error(handler, 400, "you must provide a model and messages", "invalid_request_error")
        entry = self.queue.pop(0) if self.queue else None
        if entry and entry[0] == "status":
            _, code, message, headers = entry
            return self._error(handler, code, message, "rate_limit_exceeded" if code == 429 else "server_error",
                               headers)
        if entry and entry[0] == "redirect":
            return self._send(handler, entry[1], b"", {"Location": entry[2]})
        if entry and entry[0] == "raw":
            return self._send(handler, 200, entry[1])
        if entry and entry[0] == "content":
            content = entry[1]
        else:
            prompt = body["messages"][-1]["content"]
            match = PASSAGE.search(prompt)
            content = json.dumps({"questions": [question_for(match.group(1) if match else prompt)]})
        completion = {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
                      "model": body["model"],
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                   "finish_reason": "stop"}],
                      "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        self._send(handler, 200, json.dumps(completion).encode())

    def _error(self, handler, code: int, message: str, kind: str, headers: dict | None = None) -> None:
        payload = {"error": {"message": message, "type": kind, "param": None, "code": None}}
        self._send(handler, code, json.dumps(payload).encode(), headers)
