"""The REST endpoints the stand-in serves, one module per API area: each lists its routes
as (method, path pattern, OpenAPI operation id, function answering a Request)."""

from __future__ import annotations

import re
from collections.abc import Callable

from . import actions, issues, repos
from .common import Answer, Request

Route = tuple[str, "re.Pattern[str]", str, Callable[[Request], Answer]]
ROUTES: list[Route] = [
    (method, re.compile(pattern), operation, answer)
    for method, pattern, operation, answer in (*repos.ROUTES, *actions.ROUTES, *issues.ROUTES)
]
WRITES = issues.WRITES


def route(method: str, path: str) -> tuple[str | None, Callable[[Request], Answer] | None, tuple[str, ...]]:
    """The operation id, its answer and the path's captures; None, None, () when no route matches."""
    for want, pattern, operation, answer in ROUTES:
        match = pattern.match(path)
        if match and want == method:
            return operation, answer, match.groups()
    return None, None, ()
