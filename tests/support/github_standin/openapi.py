"""Validation of the stand-in's traffic against GitHub's OpenAPI description (openapi-core):
every request against its operation's parameters and body, every response against the
operation's declared responses, and undeclared error statuses against GitHub's basic-error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from suite_paths import SHARED

SPEC_PATH = SHARED / "github" / "github-rest-subset.openapi.json"
SPEC_HOST = "https://api.github.com"  # the servers entry of the description


class OpenAPICheck:
    """Validates requests and responses against the OpenAPI description (openapi-core)."""

    _cache: ClassVar[dict[Path, OpenAPICheck]] = {}

    def __init__(self, spec_path: Path):
        import openapi_core
        from openapi_schema_validator import OAS30Validator

        self.spec = json.loads(spec_path.read_text(encoding="utf-8"))
        self.api = openapi_core.OpenAPI.from_dict(self.spec)
        # Error statuses an operation does not declare (a 500, a 401) still carry GitHub's
        # basic-error body; those are checked against that schema.
        error_schema = {
            "$ref": "#/components/schemas/basic-error",
            "components": self.spec["components"],
        }
        self.error_validator = OAS30Validator(error_schema)

    @classmethod
    def load(cls, spec_path: Path) -> OpenAPICheck:
        if spec_path not in cls._cache:
            cls._cache[spec_path] = cls(spec_path)
        return cls._cache[spec_path]

    def _request(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: bytes | None,
        content_type: str | None,
    ):
        from openapi_core.testing import MockRequest

        return MockRequest(
            SPEC_HOST,
            method.lower(),
            path,
            args=query,
            data=body or None,
            content_type=content_type or "application/json",
        )

    def check_request(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: bytes | None,
        content_type: str | None,
    ) -> list[str]:
        from openapi_core.exceptions import OpenAPIError

        try:
            self.api.validate_request(self._request(method, path, query, body, content_type))
        except OpenAPIError as exc:
            return [f"{method} {path}: {_describe(exc)}"]
        return []

    def check_response(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        status: int,
        headers: dict[str, str],
        body: bytes,
    ) -> list[str]:
        from openapi_core.exceptions import OpenAPIError
        from openapi_core.templating.responses.exceptions import ResponseNotFound
        from openapi_core.testing import MockResponse

        content_type = headers.get("Content-Type", "").split(";")[0].strip() or None
        request = self._request(method, path, query, None, None)
        response = MockResponse(
            body, status_code=status, headers=headers, content_type=content_type
        )
        try:
            self.api.validate_response(request, response)
        except ResponseNotFound:
            if status < 400:
                return [f"{method} {path} -> {status}: status not described for this operation"]
            try:
                data = json.loads(body or b"null")
            except ValueError:
                return [f"{method} {path} -> {status}: error body is not JSON"]
            errors = sorted(self.error_validator.iter_errors(data), key=lambda e: list(e.path))
            return [f"{method} {path} -> {status}: {e.message}" for e in errors]
        except OpenAPIError as exc:
            return [f"{method} {path} -> {status}: {_describe(exc)}"]
        return []


def _describe(exc: BaseException) -> str:
    """The schema errors behind an openapi-core failure, each with its JSON path."""
    cause = exc.__cause__
    details = []
    for sub in getattr(cause, "schema_errors", None) or ():
        where = "/".join(str(p) for p in getattr(sub, "absolute_path", ()))
        details.append(f"{where}: {sub.message}" if where else sub.message)
    if details:
        head = " ".join(str(exc).split())
        # "Invalid query parameter: status" is worth keeping; a dump of the whole value is not
        prefix = f"{head}: " if len(head) <= 120 else ""
        return prefix + "; ".join(details)
    text = f"{type(exc).__name__}: {exc}" + (f" ({cause})" if cause is not None else "")
    return " ".join(text.split())[:500]


def openapi_check(spec_path: Path = SPEC_PATH) -> tuple[OpenAPICheck | None, str | None]:
    """The validator, or None and the reason validation is skipped."""
    if not spec_path.is_file():
        return None, "reference data ../shared/github/github-rest-subset.openapi.json is absent"
    try:
        return OpenAPICheck.load(spec_path), None
    except ImportError as exc:
        return None, f"openapi-core is not installed ({exc})"
