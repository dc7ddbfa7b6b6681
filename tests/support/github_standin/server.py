"""The stand-in itself: its two loopback servers, what it recorded, and the checks a test
ends with. Its state (state.py), GitHub's object shapes (objects.py) and the scripted faults
(faults.py) are the classes it is made of."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .faults import FaultScript
from .handlers import ApiHandler, BlobHandler, Recorded
from .objects import GitHubObjects
from .openapi import openapi_check


class GitHubStandIn(GitHubObjects, FaultScript):
    """See the package docstring. Use as a context manager or call start()/stop().
    ``validate=False`` turns the OpenAPI validation off (a benchmark measures the action, not
    the stand-in)."""

    def __init__(
        self,
        repository: str = "acme/rag-app",
        token: str = "ghs_standinTOKEN0123456789abcdef",
        validate: bool = True,
    ):
        GitHubObjects.__init__(self, repository)
        FaultScript.__init__(self)
        self.token = token
        self.requests: list[Recorded] = []
        self.blob_requests: list[Recorded] = []
        self.blob_auth_violations: list[Recorded] = []
        self.request_problems: list[str] = []
        self.response_problems: list[str] = []
        self.validator, self.validation_skipped = openapi_check()
        if not validate:
            self.validator, self.validation_skipped = None, "turned off by the caller"
        self._api: ThreadingHTTPServer | None = None
        self._blob: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> GitHubStandIn:
        self._api = self._serve(ApiHandler)
        self._blob = self._serve(BlobHandler)
        return self

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        server.standin = self  # type: ignore[attr-defined]
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        self._threads.append(thread)
        return server

    def stop(self) -> None:
        for server in (self._api, self._blob):
            if server is not None:
                server.shutdown()
                server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> GitHubStandIn:  # noqa: PYI034
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def api_url(self) -> str:
        assert self._api is not None, "start() the stand-in first"
        return f"http://127.0.0.1:{self._api.server_address[1]}"

    @property
    def blob_url(self) -> str:
        assert self._blob is not None, "start() the stand-in first"
        return f"http://localhost:{self._blob.server_address[1]}"

    # -- recorded traffic and the checks a test ends with ----------------------------------

    def record(self, request: Recorded) -> None:
        with self._lock:
            (self.requests if request.host == "api" else self.blob_requests).append(request)

    def calls(self, operation: str) -> list[Recorded]:
        return [r for r in self.requests if r.operation == operation]

    def assert_clean(self) -> None:
        """No invalid request or response and no token sent to the blob host."""
        assert not self.blob_auth_violations, "the blob host received an Authorization header"
        assert not self.request_problems, self.request_problems
        assert not self.response_problems, self.response_problems
