"""A pull request's issue comments: listed, posted, read, edited and deleted, with GitHub's
refusals (a body that is not JSON or too long, someone else's comment)."""

from __future__ import annotations

import json
from datetime import timedelta

from ..faults import DOCS
from ..state import EPOCH
from .common import SEG, Answer, Request, error, not_found, page

MAX_COMMENT = 65536  # characters GitHub accepts in a comment body


def list_comments(request: Request) -> Answer:
    s = request.standin
    issue = int(request.rest[0])
    if s.pull(issue) is None and not s.comments_on(issue):
        return not_found()
    chunk, headers = page(request, s.comments_on(issue))
    return 200, [s.comment_object(c) for c in chunk], headers


def _comment_body(body: bytes) -> tuple[str | None, Answer | None]:
    try:
        text = json.loads(body or b"null").get("body")
    except (ValueError, AttributeError):
        text = None
    if not isinstance(text, str):
        return None, error(400, "Problems parsing JSON")
    if len(text) > MAX_COMMENT:
        too_long = {
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "IssueComment",
                    "code": "custom",
                    "field": "body",
                    "message": f"body is too long (maximum is {MAX_COMMENT} characters)",
                }
            ],
            "documentation_url": DOCS,
            "status": "422",
        }
        return None, (422, too_long, {})
    return text, None


def create_comment(request: Request) -> Answer:
    s = request.standin
    issue = int(request.rest[0])
    if s.pull(issue) is None:
        return not_found()
    text, problem = _comment_body(request.body)
    if problem:
        return problem
    comment_id = s.add_comment(issue, text, s.bot_login, created_at=EPOCH + timedelta(hours=1))
    data = s.comment_object(s.comment(comment_id))
    return 201, data, {"Location": data["url"]}


def get_comment(request: Request) -> Answer:
    comment = request.standin.comment(int(request.rest[0]))
    return (200, request.standin.comment_object(comment), {}) if comment else not_found()


def _own_comment(request: Request) -> tuple[dict | None, Answer | None]:
    """The comment to edit or delete, or the refusal GitHub gives: only the author (or a
    maintainer) may change a comment, and the bot is neither for someone else's."""
    comment = request.standin.comment(int(request.rest[0]))
    if comment is None:
        return None, not_found()
    if comment["login"] != request.standin.bot_login:
        return None, error(403, "Must have admin rights to Repository.")
    return comment, None


def update_comment(request: Request) -> Answer:
    s = request.standin
    comment, refused = _own_comment(request)
    if refused:
        return refused
    text, problem = _comment_body(request.body)
    if problem:
        return problem
    comment = s.edit_comment(comment["id"], text, updated_at=EPOCH + timedelta(hours=2))
    return 200, s.comment_object(comment), {}


def delete_comment(request: Request) -> Answer:
    comment, refused = _own_comment(request)
    if refused:
        return refused
    request.standin.delete_comment(comment["id"])
    return 204, None, {}


ROUTES = [
    ("GET", rf"^/repos/{SEG}/{SEG}/issues/(\d+)/comments$", "issues/list-comments", list_comments),
    ("POST", rf"^/repos/{SEG}/{SEG}/issues/(\d+)/comments$", "issues/create-comment", create_comment),
    ("GET", rf"^/repos/{SEG}/{SEG}/issues/comments/(\d+)$", "issues/get-comment", get_comment),
    ("PATCH", rf"^/repos/{SEG}/{SEG}/issues/comments/(\d+)$", "issues/update-comment", update_comment),
    ("DELETE", rf"^/repos/{SEG}/{SEG}/issues/comments/(\d+)$", "issues/delete-comment", delete_comment),
]
# The operations a read-only token (a fork pull request's) is refused.
WRITES = {"issues/create-comment", "issues/update-comment", "issues/delete-comment"}
