"""The GitHub adapter, through PyGithub over real HTTP against the loopback stand-in."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from github_standin import EPOCH, GitHubStandIn, fake_sha

from ci_eval.errors import GitHubError, InputError
from ci_eval.github.api import ArtifactGone, PyGithubPort, build_client
from ci_eval.github.artifact_zip import build_zip

BASE = fake_sha("base")
HEAD = fake_sha("head")
ZIP = build_zip({"ci-eval-run.json": b'{"schema_version": 1}'})


@pytest.fixture
def standin(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with GitHubStandIn() as server:
        server.add_pull(7, head_sha=HEAD, base_sha=BASE)
        yield server
        server.assert_clean()


class Waits(list):
    """Stands in for time.sleep: records each wait instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def waits():
    return Waits()


def make_port(
    standin: GitHubStandIn, waits: Waits, token: str | None = None, **options
) -> PyGithubPort:
    options.setdefault("retry_backoff", 0.01)
    options.setdefault("per_page", 100)
    client = build_client(
        standin.api_url, token or standin.token, pace_requests=False, sleep=waits, **options
    )
    return PyGithubPort(client, standin.repository)


@pytest.fixture
def port(standin, waits):
    return make_port(standin, waits)


# -- reading -------------------------------------------------------------------------------


def test_pull_request_reports_commits_and_repositories(standin, port):
    pr = port.pull_request(7)
    assert (pr.number, pr.head_sha, pr.base_sha, pr.base_ref) == (7, HEAD, BASE, "main")
    assert (pr.head_repo, pr.base_repo, pr.is_fork) == ("acme/rag-app", "acme/rag-app", False)
    assert [(r.method, r.path) for r in standin.requests] == [
        ("GET", "/repos/acme/rag-app/pulls/7")
    ]
    assert standin.requests[0].headers["authorization"] == f"token {standin.token}"


def test_pull_request_from_a_fork(standin, port):
    standin.add_pull(8, head_sha=HEAD, base_sha=BASE, head_repo="someone/rag-app", head_ref="main")
    pr = port.pull_request(8)
    assert pr.is_fork and pr.head_repo == "someone/rag-app" and pr.base_repo == "acme/rag-app"


def test_workflow_runs_follow_link_pagination_newest_first(standin, waits):
    ids = [
        standin.add_run(fake_sha(f"c{i}"), created_at=EPOCH + timedelta(hours=i)) for i in range(5)
    ]
    standin.add_run(fake_sha("pr"), head_branch="feature", event="pull_request")
    port = make_port(standin, waits, per_page=2)

    runs = list(port.workflow_runs("ci-eval.yml", branch="main"))

    assert [r.id for r in runs] == list(reversed(ids))
    calls = standin.calls("actions/list-workflow-runs")
    assert [c.query.get("page") for c in calls] == [None, "2", "3"]
    assert all(c.path == "/repos/acme/rag-app/actions/workflows/ci-eval.yml/runs" for c in calls)
    assert calls[0].query == {
        "branch": "main",
        "event": "push",
        "status": "success",
        "per_page": "2",
    }
    assert runs[0].head_repo == "acme/rag-app" and runs[0].event == "push"
    assert runs[0].created_at == EPOCH + timedelta(hours=4)


def test_workflow_runs_fetch_pages_only_as_iterated(standin, waits):
    for i in range(5):
        standin.add_run(fake_sha(f"c{i}"), created_at=EPOCH + timedelta(hours=i))
    port = make_port(standin, waits, per_page=2)
    first = next(port.workflow_runs("ci-eval.yml", branch="main"))
    assert first.head_sha == fake_sha("c4")
    assert len(standin.calls("actions/list-workflow-runs")) == 1


def test_workflow_runs_filter_by_head_sha(standin, port):
    standin.add_run(BASE)
    standin.add_run(fake_sha("other"))
    runs = list(
        port.workflow_runs("ci-eval.yml", branch=None, event=None, status=None, head_sha=BASE)
    )
    assert [r.head_sha for r in runs] == [BASE]
    assert standin.calls("actions/list-workflow-runs")[0].query == {
        "head_sha": BASE,
        "per_page": "100",
    }


def test_workflow_run_by_id_names_its_pull_requests(standin, port):
    run_id = standin.add_run(HEAD, head_branch="feature", event="pull_request", pull_requests=(7,))
    run = port.workflow_run(run_id)
    assert (run.id, run.event, run.head_sha, run.pull_requests) == (
        run_id,
        "pull_request",
        HEAD,
        (7,),
    )


def test_run_artifacts_lists_every_artifact(standin, port):
    run_id = standin.add_run(BASE)
    live = standin.add_artifact(run_id, ZIP)
    old = standin.add_artifact(run_id, ZIP, name="coverage", expired=True)
    artifacts = port.run_artifacts(run_id)
    assert [(a.id, a.name, a.expired, a.size_in_bytes) for a in artifacts] == [
        (live, "ci-eval", False, len(ZIP)),
        (old, "coverage", True, len(ZIP)),
    ]


def test_run_artifacts_of_a_deleted_run_are_gone(standin, port):
    with pytest.raises(ArtifactGone):
        port.run_artifacts(424242)


def test_list_comments_follows_pagination(standin, waits):
    ids = [standin.add_comment(7, f"comment {i}", user_login="octo-dev") for i in range(5)]
    port = make_port(standin, waits, per_page=2)
    comments = port.list_comments(7)
    assert [c.id for c in comments] == ids
    assert comments[0].user_login == "octo-dev" and comments[0].body == "comment 0"
    assert len(standin.calls("issues/list-comments")) == 3


# -- artifact download: redirect, no token on the blob host, caps ---------------------------


def test_download_follows_the_redirect_without_the_token(standin, port):
    artifact = standin.add_artifact(standin.add_run(BASE), ZIP)

    assert port.download_artifact(artifact, max_bytes=10_000) == ZIP

    [api_call] = standin.calls("actions/download-artifact")
    assert api_call.path == f"/repos/acme/rag-app/actions/artifacts/{artifact}/zip"
    assert api_call.headers["authorization"] == f"token {standin.token}"
    [blob_call] = standin.blob_requests
    assert blob_call.headers["host"].startswith("localhost:")
    assert "authorization" not in blob_call.headers
    assert "sig" in blob_call.query
    assert standin.token not in repr(blob_call)


@pytest.mark.parametrize("expired", [True, False])
def test_download_of_an_expired_or_missing_artifact_is_gone(standin, port, expired):
    artifact_id = (
        standin.add_artifact(standin.add_run(BASE), ZIP, expired=True) if expired else 999_999
    )
    with pytest.raises(ArtifactGone) as caught:
        port.download_artifact(artifact_id, max_bytes=10_000)
    assert caught.value.status == (410 if expired else 404)
    assert "expired or was deleted" in str(caught.value)
    assert standin.blob_requests == []


def test_download_larger_than_the_cap_is_refused(standin, port):
    artifact = standin.add_artifact(standin.add_run(BASE), ZIP)
    with pytest.raises(InputError, match="over the 10-byte limit"):
        port.download_artifact(artifact, max_bytes=10)


def test_download_retries_a_failing_blob_host_with_a_fresh_redirect(standin, port, waits):
    artifact = standin.add_artifact(standin.add_run(BASE), ZIP)
    standin.fail_blob(503)
    assert port.download_artifact(artifact, max_bytes=10_000) == ZIP
    assert len(standin.calls("actions/download-artifact")) == 2
    assert len(standin.blob_requests) == 2
    assert waits == [0.01]


def test_download_gives_up_after_bounded_attempts(standin, port):
    artifact = standin.add_artifact(standin.add_run(BASE), ZIP)
    standin.fail_blob(500, times=10)
    with pytest.raises(GitHubError, match=r"after 3 attempts \(HTTP 500 from localhost\)"):
        port.download_artifact(artifact, max_bytes=10_000)
    assert len(standin.blob_requests) == 3


# -- retries ------------------------------------------------------------------------------


def test_server_errors_are_retried_with_backoff(standin, port, waits):
    standin.fail("pulls/get", 502, times=2)
    assert port.pull_request(7).number == 7
    assert len(standin.calls("pulls/get")) == 3
    # urllib3's backoff: none before the first retry, then retry_backoff * 2 ** (n - 1)
    assert waits == [0.02]


def test_server_errors_that_persist_fail_after_bounded_retries(standin, waits):
    port = make_port(standin, waits, retries=2)
    standin.fail("issues/list-comments", 503, times=10)
    with pytest.raises(GitHubError) as caught:
        port.list_comments(7)
    assert str(caught.value) == (
        "GitHub kept failing while listing the comments of pull request #7 (HTTP 503) after 3 attempts"
    )
    assert len(standin.calls("issues/list-comments")) == 3


def test_writes_are_retried_too(standin, port):
    standin.fail("issues/update-comment", 500)
    comment = standin.add_comment(7, "<!-- ci-eval -->\nold")
    assert port.update_comment(comment, "<!-- ci-eval -->\nnew").body == "<!-- ci-eval -->\nnew"
    assert len(standin.calls("issues/update-comment")) == 2


def test_secondary_rate_limit_waits_as_long_as_retry_after_says(standin, port, waits):
    standin.secondary_rate_limit("issues/list-comments", retry_after=7)
    assert port.list_comments(7) == []
    assert waits == [7]
    assert len(standin.calls("issues/list-comments")) == 2


def test_a_long_retry_after_is_cut_to_max_wait(standin, waits):
    port = make_port(standin, waits, max_wait=5)
    standin.secondary_rate_limit("pulls/get", retry_after=600)
    assert port.pull_request(7).number == 7
    assert waits == [5]


def test_secondary_rate_limit_without_retry_after_waits_the_configured_time(standin, waits):
    port = make_port(standin, waits, secondary_rate_wait=11)
    standin.secondary_rate_limit("pulls/get", retry_after=None)
    assert port.pull_request(7).number == 7
    assert waits == [11]


def test_a_rate_limit_that_never_lifts_is_named(standin, waits):
    port = make_port(standin, waits, retries=1)
    standin.secondary_rate_limit("pulls/get", retry_after=1, times=10)
    with pytest.raises(
        GitHubError,
        match="rate limit was still exceeded after retrying while reading pull request #7",
    ):
        port.pull_request(7)


# -- refusals become one clear line ---------------------------------------------------------


def test_bad_token_is_named_and_not_echoed(standin, waits):
    secret = "ghs_wrongTOKENwrongTOKEN0000"
    port = make_port(standin, waits, token=secret)
    with pytest.raises(GitHubError) as caught:
        port.pull_request(7)
    message = str(caught.value)
    assert message.startswith(
        "GitHub rejected the token while reading pull request #7 (HTTP 401: Bad credentials)"
    )
    assert secret not in message and "\n" not in message
    assert len(standin.calls("pulls/get")) == 1  # a 401 is not retried


def test_a_message_echoing_the_token_is_scrubbed_before_it_is_cut(standin, waits):
    # The token straddles the 240th character the message is cut at: scrubbing after the cut
    # would miss the whole token and keep its first half.
    secret = standin.token
    port = make_port(standin, waits)
    standin.fail("pulls/get", 401, message="x" * 225 + f" {secret} was refused")
    with pytest.raises(GitHubError) as caught:
        port.pull_request(7)
    message = str(caught.value)
    assert "HTTP 401: " + "x" * 225 + " ***" in message and secret[:6] not in message


def test_read_only_token_names_the_comment_permission(standin, port):
    standin.refuse_writes()
    with pytest.raises(GitHubError) as caught:
        port.create_comment(7, "<!-- ci-eval -->\nhi")
    message = str(caught.value)
    assert "HTTP 403: Resource not accessible by integration" in message
    assert "`pull-requests: write`" in message and "workflow_run" in message
    assert len(standin.calls("issues/create-comment")) == 1


def test_missing_actions_permission_is_named(standin, port):
    run_id = standin.add_run(BASE)
    standin.fail(
        "actions/list-workflow-run-artifacts", 403, message="Resource not accessible by integration"
    )
    with pytest.raises(GitHubError, match=r"add `actions: read` under `permissions:`"):
        port.run_artifacts(run_id)


def test_editing_someone_elses_comment_is_refused(standin, port):
    theirs = standin.add_comment(7, "<!-- ci-eval -->\nquoted", user_login="octo-dev")
    with pytest.raises(
        GitHubError, match=r"GitHub refused updating comment \d+ \(HTTP 403: Must have admin rights"
    ):
        port.update_comment(theirs, "<!-- ci-eval -->\nmine now")
    assert standin.comments_on(7)[0]["body"] == "<!-- ci-eval -->\nquoted"


def test_a_comment_body_rejected_with_422_says_why(standin, port):
    with pytest.raises(GitHubError) as caught:
        port.create_comment(7, "<!-- ci-eval -->\n" + "x" * 70_000)
    assert str(caught.value) == (
        "GitHub rejected the request while commenting on pull request #7 "
        "(HTTP 422: Validation Failed: body is too long (maximum is 65536 characters))"
    )


def test_unknown_pull_request_is_a_clear_404(standin, port):
    with pytest.raises(
        GitHubError, match=r"GitHub found nothing while reading pull request #99 \(HTTP 404\)"
    ):
        port.pull_request(99)


def test_unreachable_github_is_named(waits):
    client = build_client(
        "http://127.0.0.1:9", "ghs_x", retries=0, pace_requests=False, sleep=waits
    )
    port = PyGithubPort(client, "acme/rag-app")
    with pytest.raises(
        GitHubError, match="could not reach GitHub at 127.0.0.1 while reading pull request #1"
    ):
        port.pull_request(1)


def test_token_never_reaches_messages_or_logs(standin, port, caplog):
    caplog.set_level(logging.DEBUG)
    standin.refuse_writes()
    standin.fail("pulls/get", 500, times=10)
    failures = []
    for call in (lambda: port.pull_request(7), lambda: port.create_comment(7, "<!-- m -->\nx")):
        with pytest.raises(GitHubError) as caught:
            call()
        failures.append(str(caught.value))
    assert all(standin.token not in text for text in failures)
    assert caplog.records, "PyGithub's debug log was captured"
    assert standin.token not in caplog.text


# -- writing ------------------------------------------------------------------------------


def test_create_update_delete_comment(standin, port):
    created = port.create_comment(7, "<!-- ci-eval -->\nfirst")
    assert created.user_login == "github-actions[bot]"
    assert standin.calls("issues/create-comment")[0].json() == {"body": "<!-- ci-eval -->\nfirst"}

    updated = port.update_comment(created.id, "<!-- ci-eval -->\nsecond")
    assert (updated.id, updated.body) == (created.id, "<!-- ci-eval -->\nsecond")
    assert (
        standin.calls("issues/update-comment")[0].path
        == f"/repos/acme/rag-app/issues/comments/{created.id}"
    )

    port.delete_comment(created.id)
    assert standin.comments_on(7) == []
    port.delete_comment(created.id)  # already gone: not an error
    assert [c.method for c in standin.requests] == ["POST", "PATCH", "DELETE", "DELETE"]


# -- construction -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "token", "expected"),
    [
        ("ftp://example.com", "t", r"must be an http\(s\) URL"),
        ("", "t", r"must be an http\(s\) URL"),
        ("https://api.github.com", "  ", "no GitHub token"),
    ],
)
def test_build_client_rejects_bad_settings(url, token, expected):
    with pytest.raises(InputError, match=expected):
        build_client(url, token)


def test_port_rejects_a_bad_repository_name():
    client = build_client("https://api.github.com", "t")
    with pytest.raises(InputError, match="owner/name"):
        PyGithubPort(client, "just-a-name")


# -- hostile answers and long runs ------------------------------------------------------------


def test_a_link_to_another_host_is_refused_before_pygithub_follows_it(standin, port):
    for i in range(3):
        standin.add_comment(7, f"comment {i}")
    # The blob host is another host to any client: a page there would get the token.
    standin.link_pages_to(standin.blob_url)
    small = make_port(standin, Waits(), per_page=2)

    with pytest.raises(GitHubError) as caught:
        small.list_comments(7)

    assert str(caught.value) == (
        "GitHub's answer pointed its next page at localhost, not at the API host 127.0.0.1: "
        "refusing to follow it")
    assert standin.blob_requests == [] and len(standin.calls("issues/list-comments")) == 1


def test_the_comment_search_reads_every_page(standin, port):
    # A long-lived PR: the sticky comment, posted first, is on page 1 of 31 ...
    for i in range(3_099):
        standin.add_comment(7, f"review note {i}", user_login="octocat")
    # ... and the one to find is on the last page.
    sticky = standin.add_comment(7, "<!-- ci-eval:report -->\nour report")

    comments = port.list_comments(7)

    assert len(comments) == 3_100 and comments[-1].id == sticky
    assert len(standin.calls("issues/list-comments")) == 31


def test_retry_waits_share_one_budget_per_run(standin, waits):
    port = make_port(standin, waits, max_wait=120, total_wait=200)
    standin.secondary_rate_limit("pulls/get", retry_after=120, times=2)
    standin.secondary_rate_limit("issues/list-comments", retry_after=120, times=1)

    assert port.pull_request(7).number == 7
    assert port.list_comments(7) == []

    # 120 + 80, then nothing left: the third request retried without waiting.
    assert waits == [120, 80]
    assert sum(waits) == 200
