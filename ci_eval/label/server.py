"""The page's server: the standard library's HTTP server on 127.0.0.1 and a random port.

Every request must carry the run's token (``?t=`` on the page's URL, the
``X-CI-Eval-Token`` header on API calls) and name this server in ``Host`` (so a web page
elsewhere cannot reach it through DNS rebinding). Bodies are size-capped JSON, validated like
any other input. Responses forbid framing, sniffing and referrers, and the
Content-Security-Policy lets the page run only its own script file: chunk text is data,
rendered as text, never as HTML."""

from __future__ import annotations

import hmac
import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from ci_eval.core.gold.judgement import Conflict
from ci_eval.errors import InputError
from ci_eval.inputs.files import parse_json
from ci_eval.label.session import Session
from ci_eval.label.suggest import log_line as _log  # one line per problem, never a traceback

MAX_BODY = 64 * 1024
TOKEN_HEADER = "X-CI-Eval-Token"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
STATIC = {"/app.js": ("app.js", "text/javascript; charset=utf-8"),
          "/style.css": ("style.css", "text/css; charset=utf-8")}
TOKEN_MARK = "__TOKEN__"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _asset(name: str) -> str:
    return resources.files("ci_eval.label").joinpath("static", name).read_text(encoding="utf-8")


class _Handler(BaseHTTPRequestHandler):
    server: LabelServer
    protocol_version = "HTTP/1.1"
    # The headers and the body go out as two writes on a connection the page keeps open;
    # with Nagle's algorithm the body waits for the ACK of the headers, which the browser
    # delays by up to 40 ms. Key to page at 1,000 questions: 58 ms with it, 16 ms without
    # (benchmarks/bench_label.py).
    disable_nagle_algorithm = True

    def log_message(self, format, *args):  # noqa: A002 - the standard library's name
        pass  # the terminal belongs to the user; requests are not news

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        for name, value in (("Content-Type", content_type), ("Content-Length", str(len(body))),
                            ("Content-Security-Policy", CSP), ("X-Content-Type-Options", "nosniff"),
                            ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
                            ("Cache-Control", "no-store")):
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: dict) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8")

    def _refuse(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _allowed(self) -> bool:
        host = self.headers.get("Host", "")
        if host not in self.server.hosts:
            self._refuse(403, "wrong Host")
            return False
        query = parse_qs(urlsplit(self.path).query)
        given = self.headers.get(TOKEN_HEADER) or (query.get("t") or [""])[0]
        if not hmac.compare_digest(given.encode(), self.server.token.encode()):
            self._refuse(403, "missing or wrong token")
            return False
        return True

    def do_GET(self):  # noqa: N802 - the standard library's name
        if not self._allowed():
            return
        route = urlsplit(self.path).path
        if route == "/":
            html = _asset("index.html").replace(TOKEN_MARK, self.server.token)
            self._send(200, html.encode("utf-8"), "text/html; charset=utf-8")
        elif route in STATIC:
            name, kind = STATIC[route]
            self._send(200, _asset(name).encode("utf-8"), kind)
        elif route == "/api/state":
            try:
                state = self.server.session.state()
            except InputError as exc:  # the gold set was broken by hand meanwhile: say where
                _log(f"cannot show the gold set: {exc}")
                self._refuse(500, f"the gold set cannot be read: {exc}")
            else:
                self._json(200, state)
        elif route == "/api/suggestions":
            since = (parse_qs(urlsplit(self.path).query).get("since") or ["0"])[0]
            if not since.isascii() or not since.isdigit() or len(since) > 12:
                self._refuse(400, "since must be a whole number")
                return
            self._json(200, self.server.session.suggestions(int(since)))
        else:
            self._refuse(404, "not found")

    def _body(self):
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            raise InputError("expected Content-Type: application/json", "request")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            raise InputError("Content-Length is required", "request") from None
        if not 0 <= length <= MAX_BODY:
            raise InputError(f"body over the {MAX_BODY}-byte limit", "request")
        raw = self.rfile.read(length)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("body is not UTF-8", "request") from None
        # The project's JSON reader: nesting too deep, a lone surrogate escape (no character,
        # so never writable to the gold set), NaN and repeated keys are each a reason.
        return parse_json(text, "request")

    def do_POST(self):  # noqa: N802
        if not self._allowed():
            return
        route = urlsplit(self.path).path
        if not route.startswith("/api/"):
            self._refuse(404, "not found")
            return
        try:
            state = self.server.session.handle(route[len("/api/"):], self._body())
        except Conflict as exc:
            self._json(409, {"error": str(exc), **getattr(exc, "delta", {})})
        except InputError as exc:
            # Too big or unreadable: the rest of the body is not worth reading; close.
            self.close_connection = True
            _log(f"refused {route}: {_one_line(exc)}")
            self._refuse(400, str(exc))
        except Exception as exc:  # a bug: one line for the terminal, an answer for the page
            self.close_connection = True
            _log(f"{route} failed, this is a bug: {type(exc).__name__}: {_one_line(exc)}")
            self._refuse(500, f"internal error ({type(exc).__name__}); the gold set is as it was")
        else:
            self._json(200, state)


class LabelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, session: Session | None, port: int = 0, token: str | None = None):
        """``session`` may come after the port is bound (``.session = ...``), before serving."""
        super().__init__(("127.0.0.1", port), _Handler)
        self.session = session
        self.token = token or secrets.token_urlsafe(24)
        bound = self.server_address[1]
        self.hosts = {f"127.0.0.1:{bound}", f"localhost:{bound}"}

    def handle_error(self, request, client_address) -> None:
        """What escapes a handler (a page closed mid-answer): one line, not the standard
        library's traceback."""
        exc = sys.exc_info()[1]
        _log(f"a request from the page failed: {type(exc).__name__}: {_one_line(exc)}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/?t={self.token}"

    def serve_in_thread(self) -> threading.Thread:
        # shutdown() waits for the loop's next poll: half a second at the default interval
        thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                                  name="ci-eval-label", daemon=True)
        thread.start()
        return thread
