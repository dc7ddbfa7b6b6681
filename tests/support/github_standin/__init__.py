"""A loopback GitHub for tests: real HTTP, in-memory state, recorded requests.

Two servers on 127.0.0.1, each on its own ephemeral port:

- the API (``api_url``, addressed as ``127.0.0.1``) serves the REST endpoints the action
  uses, from the state a test sets up with ``add_pull``, ``add_run``, ``add_artifact`` and
  ``add_comment``;
- the artifact blob host (``blob_url``, addressed as ``localhost`` so it is another host to
  any client) serves artifact zips reached through the ``/zip`` endpoint's 302 redirect,
  the way GitHub hands out short-lived storage URLs. It records an ``Authorization``
  header as a violation and refuses the request, as the real storage host does.

Every request is recorded (method, path, query, headers, body, operation id). Every
response the API sends is validated against GitHub's OpenAPI description in
``../shared/github/github-rest-subset.openapi.json`` (and every request against its
operation's parameters and body); problems are collected in ``response_problems`` and
``request_problems``. When ``../shared`` is absent, validation is off and
``validation_skipped`` says why.

Faults are scripted per operation id: ``fail("issues/create-comment", 403, ...)``,
``secondary_rate_limit(...)``, ``fail_blob(...)``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

SPEC_PATH = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "github"
    / "github-rest-subset.openapi.json"
)
SPEC_HOST = "https://api.github.com"  # the servers entry of the description
DOCS = "https://docs.github.com/rest"
BOT_LOGIN = "github-actions[bot]"
EPOCH = datetime(2026, 11, 2, 9, 0, 0, tzinfo=timezone.utc)
SECONDARY_RATE_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID."
)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fake_sha(seed: str) -> str:
    return hashlib.sha1(seed.encode()).hexdigest()


# -- response validation -------------------------------------------------------------------


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


def openapi_check() -> tuple[OpenAPICheck | None, str | None]:
    """The validator, or None and the reason validation is skipped."""
    if not SPEC_PATH.is_file():
        return None, "reference data ../shared/github/github-rest-subset.openapi.json is absent"
    try:
        return OpenAPICheck.load(SPEC_PATH), None
    except ImportError as exc:
        return None, f"openapi-core is not installed ({exc})"


# -- recorded traffic and scripted faults --------------------------------------------------


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


@dataclass
class Fault:
    operation: str
    status: int
    times: int
    body: Any
    headers: dict[str, str]


@dataclass
class _State:
    pulls: dict[int, dict] = field(default_factory=dict)
    runs: dict[int, dict] = field(default_factory=dict)
    artifacts: dict[int, dict] = field(default_factory=dict)
    blobs: dict[int, bytes] = field(default_factory=dict)
    comments: dict[int, dict] = field(default_factory=dict)


class GitHubStandIn:
    """See the module docstring. Use as a context manager or call start()/stop()."""

    def __init__(
        self, repository: str = "acme/rag-app", token: str = "ghs_standinTOKEN0123456789abcdef"
    ):
        self.owner, self.name = repository.split("/")
        self.repository = repository
        self.repo_id = 700_001
        self.token = token
        self.bot_login = BOT_LOGIN
        self.read_only = False  # a fork PR's token: every write answers 403
        # Where the Link header sends the next page (None: this API); another host is hostile.
        self.link_base: str | None = None
        self.state = _State()
        self.requests: list[Recorded] = []
        self.blob_requests: list[Recorded] = []
        self.blob_auth_violations: list[Recorded] = []
        self.request_problems: list[str] = []
        self.response_problems: list[str] = []
        self.faults: list[Fault] = []
        self.blob_faults: list[Fault] = []
        self.mutations: dict[str, Callable[[Any], Any]] = {}
        self.validator, self.validation_skipped = openapi_check()
        self._ids = 1000
        self._lock = threading.RLock()
        self._api: ThreadingHTTPServer | None = None
        self._blob: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> GitHubStandIn:
        self._api = self._serve(_ApiHandler)
        self._blob = self._serve(_BlobHandler)
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

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    # -- state set-up --------------------------------------------------------------------

    def add_pull(
        self,
        number: int,
        head_sha: str,
        base_sha: str,
        base_ref: str = "main",
        head_ref: str = "feature",
        head_repo: str | None = None,
        title: str = "Tune the chunker",
    ) -> dict:
        """A pull request; ``head_repo`` names a fork ("someone/rag-app"), default this repo."""
        pull = {
            "number": number,
            "head_sha": head_sha,
            "base_sha": base_sha,
            "base_ref": base_ref,
            "head_ref": head_ref,
            "head_repo": head_repo or self.repository,
            "title": title,
        }
        self.state.pulls[number] = pull
        return pull

    def add_run(
        self,
        head_sha: str,
        head_branch: str | None = "main",
        event: str = "push",
        conclusion: str | None = "success",
        head_repo: str | None = None,
        created_at: datetime | None = None,
        workflow: str = "ci-eval.yml",
        pull_requests: tuple[int, ...] = (),
        run_id: int | None = None,
    ) -> int:
        """A workflow run; ``head_repo`` is the repository the commit came from."""
        run_id = run_id or self._next_id()
        self.state.runs[run_id] = {
            "id": run_id,
            "head_sha": head_sha,
            "head_branch": head_branch,
            "event": event,
            "conclusion": conclusion,
            "status": "completed" if conclusion else "in_progress",
            "head_repo": head_repo or self.repository,
            "created_at": created_at or EPOCH,
            "workflow": workflow,
            "workflow_id": _workflow_id(workflow),
            "pull_requests": tuple(pull_requests),
        }
        return run_id

    def add_artifact(
        self,
        run_id: int,
        zip_bytes: bytes,
        name: str = "ci-eval",
        expired: bool = False,
        artifact_id: int | None = None,
    ) -> int:
        artifact_id = artifact_id or self._next_id()
        run = self.state.runs[run_id]
        self.state.artifacts[artifact_id] = {
            "id": artifact_id,
            "run_id": run_id,
            "name": name,
            "expired": expired,
            "size": len(zip_bytes),
            "created_at": run["created_at"],
        }
        self.state.blobs[artifact_id] = zip_bytes
        return artifact_id

    def add_comment(
        self,
        issue_number: int,
        body: str,
        user_login: str | None = None,
        created_at: datetime | None = None,
    ) -> int:
        comment_id = self._next_id()
        login = user_login or self.bot_login
        self.state.comments[comment_id] = {
            "id": comment_id,
            "issue": issue_number,
            "body": body,
            "login": login,
            "created_at": created_at or EPOCH,
            "updated_at": created_at or EPOCH,
        }
        return comment_id

    def comments_on(self, issue_number: int) -> list[dict]:
        return [c for _, c in sorted(self.state.comments.items()) if c["issue"] == issue_number]

    # -- faults --------------------------------------------------------------------------

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
            body = {
                "message": message or _REASONS.get(status, "Error"),
                "documentation_url": DOCS,
                "status": str(status),
            }
        self.faults.append(Fault(operation, status, times, body, dict(headers or {})))

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
        self.blob_faults.append(Fault("blob", status, times, b"", {}))

    def mutate_next(self, operation: str, change: Callable[[Any], Any]) -> None:
        """Pass the next response body of ``operation`` through ``change`` (to break it)."""
        self.mutations[operation] = change

    def _take_fault(self, queue: list[Fault], operation: str) -> Fault | None:
        with self._lock:
            for fault in queue:
                if fault.operation == operation and fault.times > 0:
                    fault.times -= 1
                    return fault
        return None

    # -- queries for assertions ----------------------------------------------------------

    def calls(self, operation: str) -> list[Recorded]:
        return [r for r in self.requests if r.operation == operation]

    def assert_clean(self) -> None:
        """No invalid request or response and no token sent to the blob host."""
        assert not self.blob_auth_violations, "the blob host received an Authorization header"
        assert not self.request_problems, self.request_problems
        assert not self.response_problems, self.response_problems

    # -- GitHub objects (every required field of the schemas, realistic values) ----------

    def api(self, path: str) -> str:
        return f"{self.api_url}{path}"

    def user(self, login: str) -> dict:
        uid = int(hashlib.sha1(login.encode()).hexdigest()[:6], 16)
        base = self.api(f"/users/{urllib.parse.quote(login)}")
        return {
            "login": login,
            "id": uid,
            "node_id": f"U_kgDO{uid:08d}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
            "gravatar_id": "",
            "url": base,
            "html_url": f"https://github.com/{urllib.parse.quote(login)}",
            "followers_url": f"{base}/followers",
            "following_url": f"{base}/following{{/other_user}}",
            "gists_url": f"{base}/gists{{/gist_id}}",
            "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{base}/subscriptions",
            "organizations_url": f"{base}/orgs",
            "repos_url": f"{base}/repos",
            "events_url": f"{base}/events{{/privacy}}",
            "received_events_url": f"{base}/received_events",
            "type": "Bot" if login.endswith("[bot]") else "User",
            "site_admin": False,
        }

    def minimal_repo(self, full_name: str) -> dict:
        owner, name = full_name.split("/")
        rid = (
            self.repo_id
            if full_name == self.repository
            else 700_000 + int(fake_sha(full_name)[:4], 16)
        )
        base = self.api(f"/repos/{full_name}")
        return {
            "id": rid,
            "node_id": f"R_kgDO{rid:08d}",
            "name": name,
            "full_name": full_name,
            "owner": self.user(owner),
            "private": False,
            "html_url": f"https://github.com/{full_name}",
            "description": "Retrieval-augmented answers over our docs",
            "fork": full_name != self.repository,
            "url": base,
            "archive_url": f"{base}/{{archive_format}}{{/ref}}",
            "assignees_url": f"{base}/assignees{{/user}}",
            "blobs_url": f"{base}/git/blobs{{/sha}}",
            "branches_url": f"{base}/branches{{/branch}}",
            "collaborators_url": f"{base}/collaborators{{/collaborator}}",
            "comments_url": f"{base}/comments{{/number}}",
            "commits_url": f"{base}/commits{{/sha}}",
            "compare_url": f"{base}/compare/{{base}}...{{head}}",
            "contents_url": f"{base}/contents/{{+path}}",
            "contributors_url": f"{base}/contributors",
            "deployments_url": f"{base}/deployments",
            "downloads_url": f"{base}/downloads",
            "events_url": f"{base}/events",
            "forks_url": f"{base}/forks",
            "git_commits_url": f"{base}/git/commits{{/sha}}",
            "git_refs_url": f"{base}/git/refs{{/sha}}",
            "git_tags_url": f"{base}/git/tags{{/sha}}",
            "hooks_url": f"{base}/hooks",
            "issue_comment_url": f"{base}/issues/comments{{/number}}",
            "issue_events_url": f"{base}/issues/events{{/number}}",
            "issues_url": f"{base}/issues{{/number}}",
            "keys_url": f"{base}/keys{{/key_id}}",
            "labels_url": f"{base}/labels{{/name}}",
            "languages_url": f"{base}/languages",
            "merges_url": f"{base}/merges",
            "milestones_url": f"{base}/milestones{{/number}}",
            "notifications_url": f"{base}/notifications{{?since,all,participating}}",
            "pulls_url": f"{base}/pulls{{/number}}",
            "releases_url": f"{base}/releases{{/id}}",
            "stargazers_url": f"{base}/stargazers",
            "statuses_url": f"{base}/statuses/{{sha}}",
            "subscribers_url": f"{base}/subscribers",
            "subscription_url": f"{base}/subscription",
            "tags_url": f"{base}/tags",
            "teams_url": f"{base}/teams",
            "trees_url": f"{base}/git/trees{{/sha}}",
        }

    def repo(self, full_name: str, full: bool = False) -> dict:
        """The ``repository`` schema (``full-repository`` with ``full=True``)."""
        data = self.minimal_repo(full_name)
        data.update(
            {
                "clone_url": f"https://github.com/{full_name}.git",
                "git_url": f"git://github.com/{full_name}.git",
                "ssh_url": f"git@github.com:{full_name}.git",
                "svn_url": f"https://github.com/{full_name}",
                "mirror_url": None,
                "homepage": None,
                "language": "Python",
                "default_branch": "main",
                "forks": 3,
                "forks_count": 3,
                "stargazers_count": 41,
                "watchers": 41,
                "watchers_count": 41,
                "size": 2048,
                "open_issues": 5,
                "open_issues_count": 5,
                "has_issues": True,
                "has_projects": False,
                "has_wiki": False,
                "has_pages": False,
                "has_downloads": True,
                "archived": False,
                "disabled": False,
                "license": {
                    "key": "mit",
                    "name": "MIT License",
                    "url": self.api("/licenses/mit"),
                    "spdx_id": "MIT",
                    "node_id": "MDc6TGljZW5zZTEz",
                },
                "pushed_at": iso(EPOCH),
                "created_at": iso(EPOCH - timedelta(days=400)),
                "updated_at": iso(EPOCH),
                "visibility": "public",
            }
        )
        if full:
            data.update({"has_discussions": False, "network_count": 3, "subscribers_count": 4})
        return data

    def pull_object(self, pull: dict) -> dict:
        number = pull["number"]
        base = self.api(f"/repos/{self.repository}")
        url = f"{base}/pulls/{number}"
        html = f"https://github.com/{self.repository}/pull/{number}"
        head_owner = pull["head_repo"].split("/")[0]

        def part(ref: str, sha: str, full_name: str) -> dict:
            owner = full_name.split("/")[0]
            return {
                "label": f"{owner}:{ref}",
                "ref": ref,
                "sha": sha,
                "user": self.user(owner),
                "repo": self.repo(full_name),
            }

        links = {
            "self": url,
            "html": html,
            "issue": f"{base}/issues/{number}",
            "comments": f"{base}/issues/{number}/comments",
            "review_comments": f"{url}/comments",
            "review_comment": f"{base}/pulls/comments{{/number}}",
            "commits": f"{url}/commits",
            "statuses": f"{base}/statuses/{pull['head_sha']}",
        }
        return {
            "url": url,
            "id": 900_000 + number,
            "node_id": f"PR_kwDO{900_000 + number:08d}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": links["issue"],
            "commits_url": links["commits"],
            "review_comments_url": links["review_comments"],
            "review_comment_url": links["review_comment"],
            "comments_url": links["comments"],
            "statuses_url": links["statuses"],
            "number": number,
            "state": "open",
            "locked": False,
            "title": pull["title"],
            "user": self.user(head_owner),
            "body": "Chunk by heading instead of by size.",
            "labels": [],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": iso(EPOCH),
            "updated_at": iso(EPOCH),
            "closed_at": None,
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": part(pull["head_ref"], pull["head_sha"], pull["head_repo"]),
            "base": part(pull["base_ref"], pull["base_sha"], self.repository),
            "_links": {k: {"href": v} for k, v in links.items()},
            "author_association": "CONTRIBUTOR"
            if pull["head_repo"] != self.repository
            else "MEMBER",
            "auto_merge": None,
            "draft": False,
            "merged": False,
            "mergeable": True,
            "rebaseable": True,
            "mergeable_state": "clean",
            "merged_by": None,
            "comments": 0,
            "review_comments": 0,
            "maintainer_can_modify": False,
            "commits": 1,
            "additions": 12,
            "deletions": 3,
            "changed_files": 2,
        }

    def run_object(self, run: dict) -> dict:
        base = self.api(f"/repos/{self.repository}")
        url = f"{base}/actions/runs/{run['id']}"
        created = run["created_at"]
        head_repo = self.minimal_repo(run["head_repo"])
        pulls = []
        for number in run["pull_requests"]:
            pull = self.state.pulls.get(number)
            if pull is None:
                continue
            pulls.append(
                {
                    "id": 900_000 + number,
                    "number": number,
                    "url": f"{base}/pulls/{number}",
                    "head": {
                        "ref": pull["head_ref"],
                        "sha": pull["head_sha"],
                        "repo": {
                            "id": head_repo["id"],
                            "url": head_repo["url"],
                            "name": head_repo["name"],
                        },
                    },
                    "base": {
                        "ref": pull["base_ref"],
                        "sha": pull["base_sha"],
                        "repo": {"id": self.repo_id, "url": base, "name": self.name},
                    },
                }
            )
        workflow_path = f".github/workflows/{run['workflow']}"
        return {
            "id": run["id"],
            "name": "ci-eval",
            "node_id": f"WFR_kwLO{run['id']:08d}",
            "check_suite_id": run["id"] * 10,
            "check_suite_node_id": f"CS_kwDO{run['id'] * 10:08d}",
            "head_branch": run["head_branch"],
            "head_sha": run["head_sha"],
            "path": workflow_path,
            "run_number": run["id"] % 1000,
            "run_attempt": 1,
            "display_title": "Evaluate retrieval",
            "event": run["event"],
            "status": run["status"],
            "conclusion": run["conclusion"],
            "workflow_id": run["workflow_id"],
            "url": url,
            "html_url": f"https://github.com/{self.repository}/actions/runs/{run['id']}",
            "pull_requests": pulls,
            "created_at": iso(created),
            "updated_at": iso(created + timedelta(minutes=3)),
            "run_started_at": iso(created),
            "actor": self.user("octo-dev"),
            "triggering_actor": self.user("octo-dev"),
            "jobs_url": f"{url}/jobs",
            "logs_url": f"{url}/logs",
            "check_suite_url": f"{base}/check-suites/{run['id'] * 10}",
            "artifacts_url": f"{url}/artifacts",
            "cancel_url": f"{url}/cancel",
            "rerun_url": f"{url}/rerun",
            "workflow_url": f"{base}/actions/workflows/{run['workflow_id']}",
            "head_commit": {
                "id": run["head_sha"],
                "tree_id": fake_sha("tree" + run["head_sha"]),
                "message": "Tune the chunker",
                "timestamp": iso(created - timedelta(minutes=1)),
                "author": {"name": "Octo Dev", "email": "octo-dev@example.com"},
                "committer": {"name": "GitHub", "email": "noreply@github.com"},
            },
            "repository": self.minimal_repo(self.repository),
            "head_repository": head_repo,
        }

    def artifact_object(self, artifact: dict) -> dict:
        base = self.api(f"/repos/{self.repository}/actions/artifacts/{artifact['id']}")
        run = self.state.runs[artifact["run_id"]]
        created = artifact["created_at"]
        return {
            "id": artifact["id"],
            "node_id": f"MDg6QXJ0aWZhY3Q{artifact['id']:08d}",
            "name": artifact["name"],
            "size_in_bytes": artifact["size"],
            "url": base,
            "archive_download_url": f"{base}/zip",
            "expired": artifact["expired"],
            "created_at": iso(created),
            "updated_at": iso(created),
            "expires_at": iso(created + timedelta(days=90)),
            "digest": "sha256:"
            + hashlib.sha256(self.state.blobs.get(artifact["id"], b"")).hexdigest(),
            "workflow_run": {
                "id": run["id"],
                "repository_id": self.repo_id,
                "head_repository_id": self.minimal_repo(run["head_repo"])["id"],
                "head_branch": run["head_branch"] or "",
                "head_sha": run["head_sha"],
            },
        }

    def comment_object(self, comment: dict) -> dict:
        base = self.api(f"/repos/{self.repository}/issues")
        return {
            "id": comment["id"],
            "node_id": f"IC_kwDO{comment['id']:08d}",
            "url": f"{base}/comments/{comment['id']}",
            "html_url": f"https://github.com/{self.repository}/pull/{comment['issue']}#issuecomment-{comment['id']}",
            "issue_url": f"{base}/{comment['issue']}",
            "body": comment["body"],
            "user": self.user(comment["login"]),
            "created_at": iso(comment["created_at"]),
            "updated_at": iso(comment["updated_at"]),
            "author_association": "NONE" if comment["login"].endswith("[bot]") else "MEMBER",
        }


_REASONS = {
    401: "Bad credentials",
    403: "Resource not accessible by integration",
    404: "Not Found",
    410: "Gone",
    422: "Validation Failed",
    500: "Server Error",
    502: "Server Error",
    503: "Service Unavailable",
}


def _workflow_id(workflow: str) -> int:
    return 160_000 + int(fake_sha(workflow)[:4], 16)


# -- the API server ------------------------------------------------------------------------

_SEG = r"([^/]+)"
_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (m, re.compile(p), op)
    for m, p, op in [
        ("GET", rf"^/repos/{_SEG}/{_SEG}$", "repos/get"),
        ("GET", rf"^/repos/{_SEG}/{_SEG}/pulls/(\d+)$", "pulls/get"),
        (
            "GET",
            rf"^/repos/{_SEG}/{_SEG}/actions/workflows/{_SEG}/runs$",
            "actions/list-workflow-runs",
        ),
        ("GET", rf"^/repos/{_SEG}/{_SEG}/actions/runs$", "actions/list-workflow-runs-for-repo"),
        ("GET", rf"^/repos/{_SEG}/{_SEG}/actions/runs/(\d+)$", "actions/get-workflow-run"),
        (
            "GET",
            rf"^/repos/{_SEG}/{_SEG}/actions/runs/(\d+)/artifacts$",
            "actions/list-workflow-run-artifacts",
        ),
        ("GET", rf"^/repos/{_SEG}/{_SEG}/actions/artifacts/(\d+)$", "actions/get-artifact"),
        (
            "GET",
            rf"^/repos/{_SEG}/{_SEG}/actions/artifacts/(\d+)/{_SEG}$",
            "actions/download-artifact",
        ),
        ("GET", rf"^/repos/{_SEG}/{_SEG}/issues/(\d+)/comments$", "issues/list-comments"),
        ("POST", rf"^/repos/{_SEG}/{_SEG}/issues/(\d+)/comments$", "issues/create-comment"),
        ("GET", rf"^/repos/{_SEG}/{_SEG}/issues/comments/(\d+)$", "issues/get-comment"),
        ("PATCH", rf"^/repos/{_SEG}/{_SEG}/issues/comments/(\d+)$", "issues/update-comment"),
        ("DELETE", rf"^/repos/{_SEG}/{_SEG}/issues/comments/(\d+)$", "issues/delete-comment"),
    ]
]
_WRITES = {"issues/create-comment", "issues/update-comment", "issues/delete-comment"}
_MAX_BODY = 1024 * 1024


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
        body = self.rfile.read(min(length, _MAX_BODY)) if length else b""
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


class _ApiHandler(_Handler):
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
        operation, args = None, ()
        for method, pattern, op in _ROUTES:
            match = pattern.match(path)
            if match and method == self.command:
                operation, args = op, match.groups()
                break
        record = Recorded("api", self.command, path, query, headers, body, operation)
        with s._lock:
            s.requests.append(record)
        if s.validator is not None and operation is not None:
            problems = s.validator.check_request(
                self.command, raw_path, query, body, headers.get("content-type")
            )
            s.request_problems.extend(problems)

        status, payload, extra = self._answer(operation, args, query, body, headers)
        if operation is not None and operation in s.mutations and status < 300:
            payload = s.mutations.pop(operation)(payload)
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
        args: tuple,
        query: dict[str, str],
        body: bytes,
        headers: dict[str, str],
    ) -> tuple[int, Any, dict[str, str]]:
        s = self.standin
        auth = headers.get("authorization", "")
        if auth not in (f"token {s.token}", f"Bearer {s.token}"):
            return (
                401,
                {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"},
                {},
            )
        if operation is None:
            return 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, {}
        owner, repo, *rest = args
        if f"{owner}/{repo}".lower() != s.repository.lower():
            return 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, {}
        fault = s._take_fault(s.faults, operation)
        if fault is not None:
            return fault.status, fault.body, dict(fault.headers)
        if operation in _WRITES and s.read_only:
            return (
                403,
                {
                    "message": "Resource not accessible by integration",
                    "documentation_url": DOCS,
                    "status": "403",
                },
                {},
            )
        handler = getattr(self, "_op_" + operation.replace("/", "_").replace("-", "_"))
        return handler(rest, query, body)

    # -- operations --------------------------------------------------------------------

    def _not_found(self) -> tuple[int, Any, dict[str, str]]:
        return 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}, {}

    def _page(self, items: list, query: dict[str, str]) -> tuple[list, dict[str, str]]:
        try:
            per_page = max(1, min(100, int(query.get("per_page", "30"))))
            page = max(1, int(query.get("page", "1")))
        except ValueError:
            per_page, page = 30, 1
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        path = urllib.parse.urlsplit(self.path).path

        def link(n: int, rel: str) -> str:
            q = dict(query, page=str(n), per_page=str(per_page))
            base = self.standin.link_base or self.standin.api_url
            return f'<{base}{path}?{urllib.parse.urlencode(q)}>; rel="{rel}"'

        links = []
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        return chunk, ({"Link": ", ".join(links)} if links else {})

    def _op_repos_get(self, rest: list, query: dict, body: bytes):
        s = self.standin
        return 200, s.repo(s.repository, full=True), {}

    def _op_pulls_get(self, rest: list, query: dict, body: bytes):
        s = self.standin
        pull = s.state.pulls.get(int(rest[0]))
        return (200, s.pull_object(pull), {}) if pull else self._not_found()

    def _runs(self, workflow: str | None, query: dict[str, str]) -> list[dict]:
        s = self.standin
        runs = list(s.state.runs.values())
        if workflow is not None:
            runs = [r for r in runs if workflow in (r["workflow"], str(r["workflow_id"]))]
        for key in ("branch", "event", "head_sha"):
            if key in query:
                field_name = "head_branch" if key == "branch" else key
                runs = [r for r in runs if r[field_name] == query[key]]
        if "status" in query:
            wanted = query["status"]
            runs = [r for r in runs if wanted in (r["status"], r["conclusion"])]
        return sorted(runs, key=lambda r: (r["created_at"], r["id"]), reverse=True)

    def _run_listing(self, runs: list[dict], query: dict[str, str]):
        chunk, headers = self._page(runs, query)
        s = self.standin
        return (
            200,
            {"total_count": len(runs), "workflow_runs": [s.run_object(r) for r in chunk]},
            headers,
        )

    def _op_actions_list_workflow_runs(self, rest: list, query: dict, body: bytes):
        return self._run_listing(self._runs(rest[0], query), query)

    def _op_actions_list_workflow_runs_for_repo(self, rest: list, query: dict, body: bytes):
        return self._run_listing(self._runs(None, query), query)

    def _op_actions_get_workflow_run(self, rest: list, query: dict, body: bytes):
        run = self.standin.state.runs.get(int(rest[0]))
        return (200, self.standin.run_object(run), {}) if run else self._not_found()

    def _op_actions_list_workflow_run_artifacts(self, rest: list, query: dict, body: bytes):
        s = self.standin
        run_id = int(rest[0])
        if run_id not in s.state.runs:
            return self._not_found()
        items = [a for _, a in sorted(s.state.artifacts.items()) if a["run_id"] == run_id]
        if "name" in query:
            items = [a for a in items if a["name"] == query["name"]]
        chunk, headers = self._page(items, query)
        return (
            200,
            {"total_count": len(items), "artifacts": [s.artifact_object(a) for a in chunk]},
            headers,
        )

    def _op_actions_get_artifact(self, rest: list, query: dict, body: bytes):
        artifact = self.standin.state.artifacts.get(int(rest[0]))
        return (200, self.standin.artifact_object(artifact), {}) if artifact else self._not_found()

    def _op_actions_download_artifact(self, rest: list, query: dict, body: bytes):
        s = self.standin
        artifact = s.state.artifacts.get(int(rest[0]))
        if artifact is None or rest[1] != "zip":
            return self._not_found()
        if artifact["expired"]:
            return (
                410,
                {"message": "Artifact has expired", "documentation_url": DOCS, "status": "410"},
                {},
            )
        signature = fake_sha(f"{artifact['id']}{len(s.requests)}")
        location = f"{s.blob_url}/artifacts/{artifact['id']}/ci-eval.zip?sig={signature}&se=2026-11-30T02%3A01%3A00Z"
        return 302, None, {"Location": location}

    def _op_issues_list_comments(self, rest: list, query: dict, body: bytes):
        s = self.standin
        issue = int(rest[0])
        if issue not in s.state.pulls and not s.comments_on(issue):
            return self._not_found()
        chunk, headers = self._page(s.comments_on(issue), query)
        return 200, [s.comment_object(c) for c in chunk], headers

    def _comment_body(self, body: bytes) -> tuple[str | None, tuple | None]:
        try:
            text = json.loads(body or b"null").get("body")
        except (ValueError, AttributeError):
            text = None
        if not isinstance(text, str):
            return None, (
                400,
                {"message": "Problems parsing JSON", "documentation_url": DOCS, "status": "400"},
                {},
            )
        if len(text) > 65536:
            return None, (
                422,
                {
                    "message": "Validation Failed",
                    "errors": [
                        {
                            "resource": "IssueComment",
                            "code": "custom",
                            "field": "body",
                            "message": "body is too long (maximum is 65536 characters)",
                        }
                    ],
                    "documentation_url": DOCS,
                    "status": "422",
                },
                {},
            )
        return text, None

    def _op_issues_create_comment(self, rest: list, query: dict, body: bytes):
        s = self.standin
        issue = int(rest[0])
        if issue not in s.state.pulls:
            return self._not_found()
        text, problem = self._comment_body(body)
        if problem:
            return problem
        comment_id = s.add_comment(issue, text, s.bot_login, created_at=EPOCH + timedelta(hours=1))
        data = s.comment_object(s.state.comments[comment_id])
        return 201, data, {"Location": data["url"]}

    def _op_issues_get_comment(self, rest: list, query: dict, body: bytes):
        comment = self.standin.state.comments.get(int(rest[0]))
        return (200, self.standin.comment_object(comment), {}) if comment else self._not_found()

    def _own_comment(self, rest: list):
        """The comment to edit or delete, or the refusal GitHub gives: only the author (or a
        maintainer) may change a comment, and the bot is neither for someone else's."""
        comment = self.standin.state.comments.get(int(rest[0]))
        if comment is None:
            return None, self._not_found()
        if comment["login"] != self.standin.bot_login:
            refusal = {"message": "Must have admin rights to Repository.", "documentation_url": DOCS,
                       "status": "403"}
            return None, (403, refusal, {})
        return comment, None

    def _op_issues_update_comment(self, rest: list, query: dict, body: bytes):
        s = self.standin
        comment, refused = self._own_comment(rest)
        if refused:
            return refused
        text, problem = self._comment_body(body)
        if problem:
            return problem
        comment["body"] = text
        comment["updated_at"] = EPOCH + timedelta(hours=2)
        return 200, s.comment_object(comment), {}

    def _op_issues_delete_comment(self, rest: list, query: dict, body: bytes):
        comment, refused = self._own_comment(rest)
        if refused:
            return refused
        del self.standin.state.comments[comment["id"]]
        return 204, None, {}


class _BlobHandler(_Handler):
    """The storage host: serves zips at the signed URLs the API redirects to."""

    def do_GET(self) -> None:
        s = self.standin
        path, query, body, headers = self._read()
        record = Recorded("blob", "GET", path, query, headers, body, "blob")
        with s._lock:
            s.blob_requests.append(record)
        if "authorization" in headers:
            s.blob_auth_violations.append(record)
            message = b"<Error><Code>InvalidAuthenticationInfo</Code></Error>"
            self._send(400, message, {"Content-Type": "application/xml"})
            return
        fault = s._take_fault(s.blob_faults, "blob")
        if fault is not None:
            self._send(fault.status, b"", {})
            return
        match = re.match(r"^/artifacts/(\d+)/ci-eval\.zip$", path)
        blob = s.state.blobs.get(int(match.group(1))) if match and query.get("sig") else None
        if blob is None:
            self._send(
                404,
                b"<Error><Code>BlobNotFound</Code></Error>",
                {"Content-Type": "application/xml"},
            )
            return
        self._send(200, blob, {"Content-Type": "application/zip"})
