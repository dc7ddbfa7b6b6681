"""What every route shares: the request as a route sees it, its answer, GitHub's error
answers and pagination with Link headers."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..faults import error_body

if TYPE_CHECKING:
    from ..server import GitHubStandIn

# (status, JSON body or None, extra headers)
Answer = tuple[int, Any, dict[str, str]]
SEG = r"([^/]+)"  # one path segment of a route's pattern


@dataclass(frozen=True)
class Request:
    standin: GitHubStandIn
    raw_path: str  # as sent, still percent-encoded: the base of the Link headers
    rest: tuple[str, ...]  # the route's captures after owner and repository
    query: dict[str, str]
    body: bytes


def error(status: int, message: str | None = None) -> Answer:
    return status, error_body(status, message), {}


def not_found() -> Answer:
    return error(404, "Not Found")


def page(request: Request, items: list) -> tuple[list, dict[str, str]]:
    """The requested page of ``items`` and its Link header, as GitHub paginates."""
    query = request.query
    try:
        per_page = max(1, min(100, int(query.get("per_page", "30"))))
        number = max(1, int(query.get("page", "1")))
    except ValueError:
        per_page, number = 30, 1
    last = max(1, -(-len(items) // per_page))
    chunk = items[(number - 1) * per_page : number * per_page]

    def link(n: int, rel: str) -> str:
        q = dict(query, page=str(n), per_page=str(per_page))
        base = request.standin.link_base or request.standin.api_url
        return f'<{base}{request.raw_path}?{urllib.parse.urlencode(q)}>; rel="{rel}"'

    links = []
    if number < last:
        links += [link(number + 1, "next"), link(last, "last")]
    if number > 1:
        links += [link(1, "first"), link(number - 1, "prev")]
    return chunk, ({"Link": ", ".join(links)} if links else {})
