"""The two HTTP servers' request handlers. The API handler records each request, validates
it, answers it (credentials, repository, scripted faults, a read-only token, then the route)
and validates the answer; the blob handler is the storage host the artifact zips are
redirected to, which refuses (and reports) any Authorization header."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from .routes import WRITES, route
from .routes.common import Answer, Request, error, not_found

if TYPE_CHECKING:
    from .server import GitHubStandIn

MAX_BODY = 1024 * 1024


@dataclass(frozen=True)
class Recorded:
    host: str  # "api" or "blob"
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes
    operation: str | None

    def json(self) -> Any:
        return json.loads(self.body or b"null")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10

    @property
    def standin(self) -> GitHubStandIn:
        return self.server.standin  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output quiet
        return

    def _read(self) -> tuple[str, dict[str, str], bytes, dict[str, str]]:
        parts = urllib.parse.urlsplit(self.path)
        query = {
            k: v[-1] for k, v in urllib.parse.parse_qs(parts.query, keep_blank_values=True).items()
        }
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, MAX_BODY)) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        return urllib.parse.unquote(parts.path), query, body, headers

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)


class ApiHandler(_Handler):
    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        s = self.standin
        raw_path = urllib.parse.urlsplit(self.path).path
        path, query, body, headers = self._read()
        operation, answer, args = route(self.command, path)
        s.record(Recorded("api", self.command, path, query, headers, body, operation))
        if s.validator is not None and operation is not None:
            problems = s.validator.check_request(
                self.command, raw_path, query, body, headers.get("content-type")
            )
            s.request_problems.extend(problems)

        status, payload, extra = self._answer(operation, answer, args, raw_path, query, body, headers)
        change = s.take_mutation(operation) if operation is not None and status < 300 else None
        if change is not None:
            payload = change(payload)
        out_headers = {
            "X-GitHub-Api-Version-Selected": "2022-11-28",
            "X-GitHub-Request-Id": f"CAFE:{len(s.requests):04X}",
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "4999",
            "X-RateLimit-Reset": "4102444800",
            "X-RateLimit-Resource": "core",
        }
        out_headers.update(extra)
        data = b""
        if payload is not None:
            data = json.dumps(payload).encode()
            out_headers["Content-Type"] = "application/json; charset=utf-8"
        if s.validator is not None and operation is not None:
            s.response_problems.extend(
                s.validator.check_response(self.command, raw_path, query, status, out_headers, data)
            )
        self._send(status, data, out_headers)

    def _answer(
        self,
        operation: str | None,
        answer: Callable[[Request], Answer] | None,
        args: tuple[str, ...],
        raw_path: str,
        query: dict[str, str],
        body: bytes,
        headers: dict[str, str],
    ) -> Answer:
        """GitHub's order: credentials, then the route and repository, then what was scripted."""
        s = self.standin
        auth = headers.get("authorization", "")
        if auth not in (f"token {s.token}", f"Bearer {s.token}"):
            return error(401, "Bad credentials")
        if operation is None:
            return not_found()
        owner, repo, *rest = args
        if f"{owner}/{repo}".lower() != s.repository.lower():
            return not_found()
        fault = s.take_fault(operation)
        if fault is not None:
            return fault.status, fault.body, dict(fault.headers)
        if operation in WRITES and s.read_only:
            return error(403, "Resource not accessible by integration")
        return answer(Request(s, raw_path, tuple(rest), query, body))


class BlobHandler(_Handler):
    """The storage host: serves zips at the signed URLs the API redirects to."""

    def do_GET(self) -> None:
        s = self.standin
        path, query, body, headers = self._read()
        record = Recorded("blob", "GET", path, query, headers, body, "blob")
        s.record(record)
        if "authorization" in headers:
            s.blob_auth_violations.append(record)
            message = b"<Error><Code>InvalidAuthenticationInfo</Code></Error>"
            self._send(400, message, {"Content-Type": "application/xml"})
            return
        fault = s.take_blob_fault()
        if fault is not None:
            self._send(fault.status, b"", {})
            return
        match = re.match(r"^/artifacts/(\d+)/ci-eval\.zip$", path)
        blob = s.blob(int(match.group(1))) if match and query.get("sig") else None
        if blob is None:
            self._send(
                404,
                b"<Error><Code>BlobNotFound</Code></Error>",
                {"Content-Type": "application/xml"},
            )
            return
        self._send(200, blob, {"Content-Type": "application/zip"})
