"""The failures a test scripts into the loopback GitHub: error statuses for the next requests
of an operation (5xx, 403, a secondary rate limit, a 422), a failing storage host, a broken
response body, a token that may not write, and Link headers that send the next page to
another host."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DOCS = "https://docs.github.com/rest"
SECONDARY_RATE_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID."
)
REASONS = {
    401: "Bad credentials",
    403: "Resource not accessible by integration",
    404: "Not Found",
    410: "Gone",
    422: "Validation Failed",
    500: "Server Error",
    502: "Server Error",
    503: "Service Unavailable",
}


def error_body(status: int, message: str | None = None) -> dict:
    """GitHub's basic-error body."""
    return {
        "message": message or REASONS.get(status, "Error"),
        "documentation_url": DOCS,
        "status": str(status),
    }


@dataclass
class Fault:
    operation: str
    status: int
    times: int
    body: Any
    headers: dict[str, str]


class FaultScript:
    """Scripted faults, taken in order by the routes as requests arrive."""

    def __init__(self) -> None:
        self.read_only = False  # a fork PR's token: every write answers 403
        # Where the Link header sends the next page (None: this API); another host is hostile.
        self.link_base: str | None = None
        self._faults: list[Fault] = []
        self._blob_faults: list[Fault] = []
        self._mutations: dict[str, Callable[[Any], Any]] = {}
        self._fault_lock = threading.Lock()

    def fail(
        self,
        operation: str,
        status: int,
        times: int = 1,
        message: str | None = None,
        headers: dict[str, str] | None = None,
        body: Any = None,
    ) -> None:
        """Answer the next ``times`` requests of ``operation`` with ``status``."""
        if body is None:
            body = error_body(status, message)
        self._faults.append(Fault(operation, status, times, body, dict(headers or {})))

    def secondary_rate_limit(
        self, operation: str, retry_after: int | None = 3, times: int = 1
    ) -> None:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        headers.update({"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4990"})
        self.fail(operation, 403, times=times, message=SECONDARY_RATE_MESSAGE, headers=headers)

    def validation_failed(self, operation: str, message: str, times: int = 1) -> None:
        body = {
            "message": "Validation Failed",
            "errors": [
                {"resource": "IssueComment", "code": "custom", "field": "body", "message": message}
            ],
            "documentation_url": DOCS,
            "status": "422",
        }
        self.fail(operation, 422, times=times, body=body)

    def fail_blob(self, status: int, times: int = 1) -> None:
        self._blob_faults.append(Fault("blob", status, times, b"", {}))

    def mutate_next(self, operation: str, change: Callable[[Any], Any]) -> None:
        """Pass the next response body of ``operation`` through ``change`` (to break it)."""
        self._mutations[operation] = change

    def refuse_writes(self, refuse: bool = True) -> None:
        """A token without ``pull-requests: write`` (a fork's): every write answers 403."""
        self.read_only = refuse

    def link_pages_to(self, base: str | None) -> None:
        """Send the Link header's next pages to ``base`` (another host: it would get the token)."""
        self.link_base = base

    # -- taken by the routes ---------------------------------------------------------------

    def take_fault(self, operation: str) -> Fault | None:
        return self._take(self._faults, operation)

    def take_blob_fault(self) -> Fault | None:
        return self._take(self._blob_faults, "blob")

    def take_mutation(self, operation: str) -> Callable[[Any], Any] | None:
        return self._mutations.pop(operation, None)

    def _take(self, queue: list[Fault], operation: str) -> Fault | None:
        with self._fault_lock:
            for fault in queue:
                if fault.operation == operation and fault.times > 0:
                    fault.times -= 1
                    return fault
        return None
