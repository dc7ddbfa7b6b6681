"""Everything ci_eval asks of GitHub, behind one small Protocol.

The entry point builds one PyGithub client with :func:`build_client` and wraps it in
:class:`PyGithubPort`; everything else receives a :class:`GitHubPort` and sees only the plain
frozen dataclasses below, so tests can pass a stand-in and no PyGithub object leaks out.

What the adapter guarantees:

- Retries with exponential backoff on 5xx, 429 and rate-limited 403 responses, honouring
  ``Retry-After`` (capped by ``max_wait``), through PyGithub's ``GithubRetry``.
- Failures become :class:`~ci_eval.errors.GitHubError` with one line that says what was
  being done and what to change (a 403 "Resource not accessible by integration" names the
  missing ``permissions:`` entry). A 404 or 410 on an artifact or its run is
  :class:`ArtifactGone`, which callers treat as "no baseline".
- Artifact zips are downloaded in two steps: the API's ``/zip`` endpoint answers with a
  redirect, which is not followed by the API client; the ``Location`` URL is then fetched
  with no ``Authorization`` header, so the token never reaches the blob host, and the
  download stops at ``max_bytes``.
- The token never appears in an exception message.

Example::

    client = build_client(os.environ["GITHUB_API_URL"], token)
    gh = PyGithubPort(client, "acme/rag-app")
    pr = gh.pull_request(12)
    for run in gh.workflow_runs("ci-eval.yml", branch=pr.base_ref):
        ...
"""

from __future__ import annotations

import http.client
import inspect
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from github import Auth, Github, GithubException, GithubRetry
from github.Artifact import Artifact
from github.PaginatedList import PaginatedList
from github.Requester import HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass, Requester

from ci_eval import __version__
from ci_eval.core.compare.baseline import ArtifactInfo, RunInfo
from ci_eval.core.sticky import CommentInfo
from ci_eval.core.text import one_line, scrub
from ci_eval.errors import GitHubError, InputError

__all__ = [
    "ArtifactGone",
    "ArtifactInfo",
    "CommentInfo",
    "GitHubPort",
    "PullInfo",
    "PyGithubPort",
    "RunInfo",
    "build_client",
]

# The `permissions:` entries each call needs, named in 403 messages.
PERMISSION_PULLS_READ = "pull-requests: read"
PERMISSION_COMMENTS = "pull-requests: write"
PERMISSION_ACTIONS = "actions: read"

_REDIRECTS = (301, 302, 303, 307, 308)
# The most one run waits for GitHub in all (every Retry-After and backoff together); once
# spent, retries go on without waiting and a GitHub that still refuses fails the call.
TOTAL_WAIT = 180.0
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class PullInfo:
    number: int
    head_sha: str
    base_sha: str
    base_ref: str
    head_repo: str | None  # None when the fork was deleted
    base_repo: str
    is_fork: bool
    labels: tuple[str, ...] = ()  # the label names GitHub reports on the PR


class ArtifactGone(GitHubError):
    """The artifact (or the run holding it) is gone: 404 or 410. Means "no baseline"."""

    def __init__(self, message: str, artifact_id: int | None = None, status: int | None = None):
        super().__init__(message)
        self.artifact_id = artifact_id
        self.status = status


class GitHubPort(Protocol):
    """What ci_eval needs from GitHub. Runs, artifacts and comments of one repository."""

    def pull_request(self, number: int) -> PullInfo: ...

    def workflow_runs(
        self,
        workflow: str | int,
        branch: str | None,
        event: str | None = "push",
        status: str | None = "success",
        head_sha: str | None = None,
    ) -> Iterator[RunInfo]: ...

    def workflow_run(self, run_id: int) -> RunInfo: ...

    def run_artifacts(self, run_id: int) -> list[ArtifactInfo]: ...

    def download_artifact(self, artifact_id: int, max_bytes: int) -> bytes: ...

    def list_comments(self, issue_number: int) -> list[CommentInfo]: ...

    def create_comment(self, issue_number: int, body: str) -> CommentInfo: ...

    def update_comment(self, comment_id: int, body: str) -> CommentInfo: ...

    def delete_comment(self, comment_id: int) -> None: ...


class ForeignLink(GitHubError):
    """A ``Link`` header sent the next page to another host than the API's."""


_LINK_URL = re.compile(r"<([^>]*)>")


def _check_links(headers: Any, scheme: str, host: str, port: int) -> None:
    """Refuse a ``Link`` header naming any other place than the API itself, before
    PyGithub follows it: the token would go along, and PyGithub stops on an assertion."""
    for name, value in headers:
        if str(name).lower() != "link":
            continue
        for url in _LINK_URL.findall(str(value)):
            parts = urllib.parse.urlsplit(url)
            try:
                same = (parts.scheme, parts.hostname, parts.port or _DEFAULT_PORTS.get(parts.scheme)) == (
                    scheme, host.lower(), port)
            except ValueError:  # a port that is not a number
                same = False
            if not same:
                raise ForeignLink(
                    f"GitHub's answer pointed its next page at {one_line(parts.hostname or url, 80)}, "
                    f"not at the API host {host}: refusing to follow it"
                )


_DEFAULT_PORTS = {"http": 80, "https": 443}


class _LinkCheckedHTTPS(HTTPSRequestsConnectionClass):
    def getresponse(self):  # noqa: ANN201 - PyGithub's type
        response = super().getresponse()
        _check_links(response.getheaders(), "https", self.host, int(self.port))
        return response


class _LinkCheckedHTTP(HTTPRequestsConnectionClass):
    def getresponse(self):  # noqa: ANN201 - PyGithub's type
        response = super().getresponse()
        _check_links(response.getheaders(), "http", self.host, int(self.port))
        return response


class WaitBudget:
    """The seconds of retry waits (``Retry-After``, backoff) one run may still spend, shared
    by every request of the run: four retries capped at two minutes each are eight."""

    def __init__(self, seconds: float):
        self.left = max(0.0, float(seconds))
        self._lock = threading.Lock()

    def take(self, seconds: float) -> float:
        with self._lock:
            granted = min(max(seconds, 0.0), self.left)
            self.left -= granted
            return granted


class _Retry(GithubRetry):
    """GithubRetry with a cap on every wait and an injectable sleep (tests record waits)."""

    def __init__(
        self, *, max_wait: float = 120.0, sleep: Callable[[float], None] = time.sleep,
        budget: WaitBudget | None = None, **kwargs: Any
    ):
        self.max_wait = max_wait
        self.sleep_function = sleep
        self.budget = budget or WaitBudget(TOTAL_WAIT)
        super().__init__(**kwargs)

    def new(self, **kwargs: Any) -> _Retry:
        kwargs.update(max_wait=self.max_wait, sleep=self.sleep_function, budget=self.budget)
        return super().new(**kwargs)  # type: ignore[return-value]

    def _wait(self, seconds: float) -> None:
        granted = self.budget.take(min(seconds, self.max_wait))
        if granted > 0:
            self.sleep_function(granted)

    def sleep_for_retry(self, response: Any) -> bool:  # urllib3 hook
        retry_after = self.get_retry_after(response)
        if retry_after is None:
            return False
        self._wait(retry_after)
        return True

    def _sleep_backoff(self) -> None:  # urllib3 hook
        backoff = self.get_backoff_time()
        if backoff > 0:
            self._wait(backoff)


def _check_client_inputs(api_url: str, token: str) -> None:
    parsed = urllib.parse.urlsplit(api_url or "")
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise InputError(
            f"the GitHub API URL must be an http(s) URL, got {api_url!r}", "GITHUB_API_URL"
        )
    if not token or not token.strip():
        raise InputError(
            "no GitHub token was given (pass github-token, usually ${{ github.token }})"
        )


def build_client(
    api_url: str,
    token: str,
    retry_backoff: float = 1.0,
    retries: int = 4,
    max_wait: float = 120.0,
    secondary_rate_wait: float = 60.0,
    timeout: int = 30,
    per_page: int = 100,
    pace_requests: bool = True,
    sleep: Callable[[float], None] = time.sleep,
    total_wait: float = TOTAL_WAIT,
) -> Github:
    """The one PyGithub client of a run.

    ``retry_backoff`` is the first retry's wait in seconds (doubled for each further
    retry), ``retries`` how many times one request is retried, ``max_wait`` the longest
    single wait (a longer ``Retry-After`` is cut to it), ``secondary_rate_wait`` the wait
    after a secondary rate limit that came without ``Retry-After``. ``pace_requests``
    keeps PyGithub's spacing between requests (a quarter second between any two, a second
    between writes); ci-eval's commands turn it off: they make their requests one at a
    time and at most a few writes (a comment posted or updated), as GitHub asks. ``sleep`` is how waiting is done, and
    ``total_wait`` the seconds of waiting the whole client may spend (see TOTAL_WAIT).
    """
    _check_client_inputs(api_url, token)
    options: dict[str, Any] = {
        "total": retries,
        "backoff_factor": retry_backoff,
        "backoff_max": max_wait,
        "status_forcelist": list(range(500, 600)) + [429],
        "allowed_methods": {"GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"},
        "raise_on_status": False,
        "raise_on_redirect": False,
        "secondary_rate_wait": secondary_rate_wait,
        "max_wait": max_wait,
        "sleep": sleep,
        "budget": WaitBudget(total_wait),
    }
    if "max_rate_limit_wait" in inspect.signature(GithubRetry.__init__).parameters:
        # a primary rate limit resetting in an hour fails now instead of sleeping
        options["max_rate_limit_wait"] = max_wait
    # Every answer's Link header is checked before PyGithub reads it (see _check_links).
    Requester.injectConnectionClasses(_LinkCheckedHTTP, _LinkCheckedHTTPS)
    pacing: dict[str, Any] = (
        {} if pace_requests else {"seconds_between_requests": None, "seconds_between_writes": None}
    )
    return Github(
        auth=Auth.Token(token.strip()),
        base_url=api_url.rstrip("/"),
        timeout=timeout,
        per_page=per_page,
        user_agent=f"ci-eval/{__version__}",
        retry=_Retry(**options),
        lazy=True,
        **pacing,
    )


class PyGithubPort:
    """:class:`GitHubPort` over a PyGithub client, for one repository ("owner/name")."""

    def __init__(
        self,
        client: Github,
        repository: str,
        max_artifacts: int = 500,
        download_attempts: int = 3,
    ):
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise InputError(
                f"the repository must be 'owner/name', got {repository!r}", "GITHUB_REPOSITORY"
            )
        self._client = client
        self._requester: Requester = client.requester
        self._repository = repository
        self._repo = client.get_repo(repository)
        self._path = (
            f"/repos/{urllib.parse.quote(owner, safe='')}/{urllib.parse.quote(name, safe='')}"
        )
        self._max_artifacts = max_artifacts
        self._download_attempts = max(1, download_attempts)
        retry = self._requester.kwargs.get("retry")
        self._sleep: Callable[[float], None] = getattr(retry, "sleep_function", time.sleep)
        self._budget: WaitBudget | None = getattr(retry, "budget", None)
        self._backoff = float(getattr(retry, "backoff_factor", 1.0) or 0.0)
        self._attempts = 1 + int(getattr(retry, "total", 0) or 0)
        self._timeout = int(self._requester.kwargs.get("timeout") or 30)
        auth = self._requester.auth
        self._secret = getattr(auth, "token", None) or ""

    # -- reading ---------------------------------------------------------------------------

    def pull_request(self, number: int) -> PullInfo:
        """The PR's head and base commits and repositories (``GET /pulls/{number}``)."""
        action = f"reading pull request #{number}"
        with self._errors(action, PERMISSION_PULLS_READ):
            pr = self._repo.get_pull(int(number))
            head_repo = pr.head.repo.full_name if pr.head.repo is not None else None
            base_repo = pr.base.repo.full_name
            return PullInfo(
                number=pr.number,
                head_sha=pr.head.sha,
                base_sha=pr.base.sha,
                base_ref=pr.base.ref,
                head_repo=head_repo,
                base_repo=base_repo,
                is_fork=head_repo is None or head_repo.lower() != base_repo.lower(),
                labels=tuple(label.name for label in pr.labels),
            )

    def workflow_runs(
        self,
        workflow: str | int,
        branch: str | None,
        event: str | None = "push",
        status: str | None = "success",
        head_sha: str | None = None,
    ) -> Iterator[RunInfo]:
        """This workflow's runs, newest first, page by page as the caller iterates.

        ``workflow`` is the workflow's id or file name (``ci-eval.yml``). ``None`` drops a
        filter. Stop iterating to stop fetching pages.
        """
        action = f"listing runs of workflow {workflow}"
        filters = {"branch": branch, "event": event, "status": status, "head_sha": head_sha}
        params = {k: v for k, v in filters.items() if v is not None}
        with self._errors(action, PERMISSION_ACTIONS):
            listing = self._repo.get_workflow(workflow).get_runs(**params)
            iterator = iter(listing)
        while True:
            with self._errors(action, PERMISSION_ACTIONS):
                run = next(iterator, None)
                if run is None:
                    return
                info = _run_info(run)
            yield info

    def workflow_run(self, run_id: int) -> RunInfo:
        """One run by id, with the numbers of the pull requests it belongs to."""
        with self._errors(f"reading workflow run {run_id}", PERMISSION_ACTIONS):
            return _run_info(self._repo.get_workflow_run(int(run_id)))

    def run_artifacts(self, run_id: int) -> list[ArtifactInfo]:
        """The artifacts of one run; :class:`ArtifactGone` when the run is gone."""
        action = f"listing the artifacts of workflow run {run_id}"
        url = f"{self._path}/actions/runs/{int(run_id)}/artifacts"
        with self._errors(action, PERMISSION_ACTIONS, gone=True):
            listing = PaginatedList(Artifact, self._requester, url, None, list_item="artifacts")
            out = []
            for artifact in listing:
                out.append(
                    ArtifactInfo(
                        id=artifact.id,
                        name=artifact.name,
                        expired=bool(artifact.expired),
                        size_in_bytes=int(artifact.size_in_bytes or 0),
                        created_at=artifact.created_at,
                    )
                )
                if len(out) >= self._max_artifacts:
                    break
            return out

    def download_artifact(self, artifact_id: int, max_bytes: int) -> bytes:
        """The artifact's zip bytes, at most ``max_bytes`` of them.

        ``GET .../artifacts/{id}/zip`` answers with a short-lived redirect; it is fetched
        without the token. Raises :class:`ArtifactGone` on 404/410 (expired, deleted) and
        :class:`InputError` when the zip is larger than ``max_bytes``.
        """
        artifact_id = int(artifact_id)
        action = f"downloading artifact {artifact_id}"
        url = f"{self._path}/actions/artifacts/{artifact_id}/zip"
        problem = ""
        for attempt in range(self._download_attempts):
            with self._errors(action, PERMISSION_ACTIONS, gone=True):
                status, headers, output = self._requester.requestJson("GET", url)
                if status >= 400:
                    raise Requester.createException(status, headers, _json_or_none(output))
            location = headers.get("location")
            if status not in _REDIRECTS or not location:
                raise GitHubError(
                    f"GitHub answered HTTP {status} without a download location while {action}"
                )
            try:
                return self._fetch_blob(location, max_bytes, artifact_id)
            except _TryAgain as exc:
                problem = str(exc)
                if attempt + 1 < self._download_attempts:
                    wait = self._budget.take(self._backoff * (2**attempt)) if self._budget else 0.0
                    if wait > 0:
                        self._sleep(wait)
        raise GitHubError(
            f"could not download artifact {artifact_id} from the storage host after "
            f"{self._download_attempts} attempts ({problem})"
        )

    def list_comments(self, issue_number: int) -> list[CommentInfo]:
        """Every comment on the PR (or issue), oldest first, every page the API returns:
        the sticky comment of a long-running PR may sit on page 31."""
        action = f"listing the comments of pull request #{issue_number}"
        with self._errors(action, PERMISSION_PULLS_READ):
            out = []
            for comment in self._repo.get_issue(int(issue_number)).get_comments():
                out.append(
                    CommentInfo(
                        id=comment.id,
                        body=comment.body or "",
                        user_login=comment.user.login if comment.user is not None else "",
                        html_url=comment.html_url or "",
                    )
                )
            return out

    # -- writing ---------------------------------------------------------------------------

    def create_comment(self, issue_number: int, body: str) -> CommentInfo:
        action = f"commenting on pull request #{issue_number}"
        url = f"{self._path}/issues/{int(issue_number)}/comments"
        with self._errors(action, PERMISSION_COMMENTS):
            _, data = self._requester.requestJsonAndCheck("POST", url, input={"body": body})
            return _comment_info(data)

    def update_comment(self, comment_id: int, body: str) -> CommentInfo:
        action = f"updating comment {comment_id}"
        url = f"{self._path}/issues/comments/{int(comment_id)}"
        with self._errors(action, PERMISSION_COMMENTS):
            _, data = self._requester.requestJsonAndCheck("PATCH", url, input={"body": body})
            return _comment_info(data)

    def delete_comment(self, comment_id: int) -> None:
        """Delete a comment; one that is already gone (404) counts as deleted."""
        action = f"deleting comment {comment_id}"
        url = f"{self._path}/issues/comments/{int(comment_id)}"
        with self._errors(action, PERMISSION_COMMENTS):
            try:
                self._requester.requestJsonAndCheck("DELETE", url)
            except GithubException as exc:
                if exc.status != 404:
                    raise

    # -- plumbing --------------------------------------------------------------------------

    def _fetch_blob(self, location: str, max_bytes: int, artifact_id: int) -> bytes:
        parts = urllib.parse.urlsplit(location)
        host = parts.hostname or "?"
        if parts.scheme not in ("http", "https"):
            raise GitHubError(
                f"GitHub redirected artifact {artifact_id} to a non-http URL ({parts.scheme}:)"
            )
        # A fresh request with only these headers: no Authorization ever goes to the blob host.
        request = urllib.request.Request(
            location,
            headers={
                "User-Agent": f"ci-eval/{__version__}",
                "Accept": "application/zip, application/octet-stream",
            },
            method="GET",
        )
        source = f"artifact {artifact_id}"
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                declared = response.headers.get("Content-Length")
                if declared and declared.isdigit() and int(declared) > max_bytes:
                    raise InputError(
                        f"the download is {declared} bytes, over the {max_bytes}-byte limit", source
                    )
                data = bytearray()
                while True:
                    chunk = response.read(_CHUNK)
                    if not chunk:
                        break
                    data += chunk
                    if len(data) > max_bytes:
                        raise InputError(f"the download exceeds the {max_bytes}-byte limit", source)
                return bytes(data)
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code in (403, 404, 408, 410, 429) or exc.code >= 500:
                raise _TryAgain(f"HTTP {exc.code} from {host}") from None
            raise GitHubError(
                f"the storage host {host} answered HTTP {exc.code} for artifact {artifact_id}"
            ) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            raise _TryAgain(f"{type(exc).__name__} from {host}") from None

    def _errors(self, action: str, permission: str, gone: bool = False) -> _Translate:
        return _Translate(self, action, permission, gone)

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secret)

    def _message(self, exc: GithubException, action: str, permission: str) -> str:
        status = exc.status
        data = exc.data if isinstance(exc.data, dict) else {}
        message = one_line(self._scrub(str(data.get("message") or "")), 240)  # scrubbed before the cut
        headers = {str(k).lower(): v for k, v in (exc.headers or {}).items()}
        rate_limited = (
            status == 429
            or Requester.isRateLimitError(message)
            or (
                status == 403
                and ("retry-after" in headers or str(headers.get("x-ratelimit-remaining")) == "0")
            )
        )
        if rate_limited:
            return (
                f"GitHub's rate limit was still exceeded after retrying while {action} "
                f"(HTTP {status}{': ' + message if message else ''}); try again later"
            )
        if status == 401:
            return (
                f"GitHub rejected the token while {action} (HTTP 401: {message or 'Bad credentials'}); "
                "pass a valid token, usually ${{ github.token }}"
            )
        if status == 403 and "resource not accessible by integration" in message.lower():
            hint = (
                "; a pull request from a fork gets a read-only token, so post the comment from a "
                "separate workflow_run workflow"
                if permission == PERMISSION_COMMENTS
                else ""
            )
            return (
                f"the token may not do this: {action} (HTTP 403: Resource not accessible by "
                f"integration); add `{permission}` under `permissions:` in the workflow{hint}"
            )
        if status == 403:
            return f"GitHub refused {action} (HTTP 403: {message or 'Forbidden'}); the token needs `{permission}`"
        if status == 404:
            return (
                f"GitHub found nothing while {action} (HTTP 404); check the repository, the number "
                f"and that the token can read it (`{permission}`)"
            )
        if status == 422:
            details = [
                one_line(e.get("message") or e.get("code") or "", 120)
                for e in data.get("errors") or []
                if isinstance(e, dict)
            ]
            detail = "; ".join(d for d in details if d)
            return (
                f"GitHub rejected the request while {action} (HTTP 422: {message or 'Validation Failed'}"
                f"{': ' + detail if detail else ''})"
            )
        if status >= 500:
            return f"GitHub kept failing while {action} (HTTP {status}) after {self._attempts} attempts"
        return f"GitHub answered HTTP {status} while {action}{': ' + message if message else ''}"


class _TryAgain(Exception):
    """A blob download failed in a way a fresh redirect URL may fix."""


class _Translate:
    """Turns PyGithub and network failures inside a ``with`` block into GitHubError."""

    def __init__(self, port: PyGithubPort, action: str, permission: str, gone: bool):
        self.port, self.action, self.permission, self.gone = port, action, permission, gone

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> bool:
        if exc is None or isinstance(exc, (GitHubError, InputError)):
            return False
        port = self.port
        if isinstance(exc, GithubException):
            if self.gone and exc.status in (404, 410):
                raise ArtifactGone(
                    f"GitHub answered HTTP {exc.status} while {self.action}: the artifact or its "
                    "run expired or was deleted",
                    status=exc.status,
                ) from None
            error = GitHubError(port._scrub(port._message(exc, self.action, self.permission)))
            error.status = exc.status  # the poster tells "no such pull request" (404) apart
            raise error from None
        if isinstance(exc, (OSError, http.client.HTTPException)):
            host = urllib.parse.urlsplit(port._requester.base_url).hostname
            raise GitHubError(
                port._scrub(
                    f"could not reach GitHub at {host} while {self.action} ({type(exc).__name__})"
                )
            ) from None
        return False


def _json_or_none(output: Any) -> Any:
    if not output:
        return None
    try:
        return json.loads(output)
    except (TypeError, ValueError):
        return {"message": one_line(output, 120)}


def _run_info(run: Any) -> RunInfo:
    head_repository = run.head_repository
    return RunInfo(
        id=run.id,
        head_sha=run.head_sha,
        head_branch=run.head_branch,
        head_repo=head_repository.full_name if head_repository is not None else None,
        event=run.event,
        conclusion=run.conclusion,
        created_at=run.created_at,
        html_url=run.html_url,
        pull_requests=tuple(pr.number for pr in (run.pull_requests or [])),
    )


def _comment_info(data: Any) -> CommentInfo:
    if not isinstance(data, dict) or not isinstance(data.get("id"), int):
        raise GitHubError("GitHub answered a comment request without the comment")
    user = data.get("user") or {}
    return CommentInfo(
        id=data["id"],
        body=data.get("body") or "",
        user_login=user.get("login") or "",
        html_url=data.get("html_url") or "",
    )
