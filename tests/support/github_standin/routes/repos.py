"""The repository and its pull requests."""

from __future__ import annotations

from .common import SEG, Answer, Request, not_found


def get_repo(request: Request) -> Answer:
    s = request.standin
    return 200, s.repo(s.repository, full=True), {}


def get_pull(request: Request) -> Answer:
    s = request.standin
    pull = s.pull(int(request.rest[0]))
    return (200, s.pull_object(pull), {}) if pull else not_found()


ROUTES = [
    ("GET", rf"^/repos/{SEG}/{SEG}$", "repos/get", get_repo),
    ("GET", rf"^/repos/{SEG}/{SEG}/pulls/(\d+)$", "pulls/get", get_pull),
]
