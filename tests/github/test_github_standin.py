"""The loopback GitHub itself: its answers match GitHub's OpenAPI description, and the check
that says so can fail."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import github_standin
import pytest
from github_standin import GitHubStandIn, fake_sha

from ci_eval.github.artifact_zip import build_zip

BASE = fake_sha("base")


@pytest.fixture
def standin(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with GitHubStandIn() as server:
        yield server


@pytest.fixture
def validating(standin):
    if standin.validator is None:
        pytest.skip(f"response validation is off: {standin.validation_skipped}")
    return standin


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def call(standin, method, path, body=None, token=None):
    """One raw request: (status, headers, parsed JSON or None)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(standin.api_url + path, data=data, method=method)
    request.add_header("Authorization", f"token {token or standin.token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            status, headers, raw = response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        status, headers, raw = exc.code, dict(exc.headers), exc.read()
    return status, headers, (json.loads(raw) if raw else None)


def populate(standin):
    standin.add_pull(7, head_sha=fake_sha("head"), base_sha=BASE)
    standin.add_pull(
        8, head_sha=fake_sha("fork"), base_sha=BASE, head_repo="someone/rag-app", head_ref="main"
    )
    run = standin.add_run(BASE, pull_requests=())
    pr_run = standin.add_run(
        fake_sha("head"), head_branch="feature", event="pull_request", pull_requests=(7,)
    )
    fork_run = standin.add_run(fake_sha("fork"), head_repo="someone/rag-app", event="push")
    artifact = standin.add_artifact(run, build_zip({"ci-eval-run.json": b"{}"}))
    expired = standin.add_artifact(run, b"", expired=True)
    comment = standin.add_comment(7, "<!-- ci-eval -->\nold", user_login=standin.bot_login)
    return {
        "run": run,
        "pr_run": pr_run,
        "fork_run": fork_run,
        "artifact": artifact,
        "expired": expired,
        "comment": comment,
    }


def test_every_endpoint_answers_what_the_openapi_description_says(validating):
    s = validating
    ids = populate(s)
    repo = "/repos/acme/rag-app"
    exchanges = [
        ("GET", repo, None, 200),
        ("GET", f"{repo}/pulls/7", None, 200),
        ("GET", f"{repo}/pulls/8", None, 200),
        ("GET", f"{repo}/pulls/99", None, 404),
        ("GET", f"{repo}/actions/workflows/ci-eval.yml/runs?branch=main&per_page=1", None, 200),
        ("GET", f"{repo}/actions/runs?event=pull_request", None, 200),
        ("GET", f"{repo}/actions/runs/{ids['pr_run']}", None, 200),
        ("GET", f"{repo}/actions/runs/{ids['fork_run']}", None, 200),
        ("GET", f"{repo}/actions/runs/{ids['run']}/artifacts", None, 200),
        ("GET", f"{repo}/actions/artifacts/{ids['artifact']}", None, 200),
        ("GET", f"{repo}/actions/artifacts/{ids['artifact']}/zip", None, 302),
        ("GET", f"{repo}/actions/artifacts/{ids['expired']}/zip", None, 410),
        ("GET", f"{repo}/issues/7/comments", None, 200),
        ("POST", f"{repo}/issues/7/comments", {"body": "<!-- ci-eval -->\nnew"}, 201),
        ("POST", f"{repo}/issues/7/comments", {"body": "x" * 70_000}, 422),
        ("GET", f"{repo}/issues/comments/{ids['comment']}", None, 200),
        (
            "PATCH",
            f"{repo}/issues/comments/{ids['comment']}",
            {"body": "<!-- ci-eval -->\nnewer"},
            200,
        ),
        ("DELETE", f"{repo}/issues/comments/{ids['comment']}", None, 204),
    ]
    statuses = [call(s, method, path, body)[0] for method, path, body, _ in exchanges]
    assert statuses == [expected for *_, expected in exchanges]
    assert s.response_problems == []
    assert s.request_problems == []
    assert len(s.requests) == len(exchanges)


def test_scripted_faults_also_answer_valid_error_bodies(validating):
    s = validating
    populate(s)
    s.fail("pulls/get", 502)
    s.secondary_rate_limit("issues/list-comments", retry_after=9)
    s.validation_failed("issues/create-comment", "body is too long (maximum is 65536 characters)")
    assert call(s, "GET", "/repos/acme/rag-app/pulls/7")[0] == 502
    status, headers, body = call(s, "GET", "/repos/acme/rag-app/issues/7/comments")
    assert (status, headers["Retry-After"]) == (403, "9")
    assert body["message"].startswith("You have exceeded a secondary rate limit")
    assert call(s, "POST", "/repos/acme/rag-app/issues/7/comments", {"body": "x"})[0] == 422
    assert call(s, "GET", "/repos/acme/rag-app/pulls/7", token="ghs_wrong")[0] == 401
    assert s.response_problems == []


def test_a_response_missing_a_required_field_is_caught(validating):
    s = validating
    populate(s)
    s.mutate_next("pulls/get", lambda pull: {k: v for k, v in pull.items() if k != "head"})
    assert call(s, "GET", "/repos/acme/rag-app/pulls/7")[0] == 200
    assert len(s.response_problems) == 1
    assert "'head' is a required property" in s.response_problems[0]
    with pytest.raises(AssertionError):
        s.assert_clean()


def test_a_wrongly_typed_nested_field_is_caught(validating):
    s = validating
    ids = populate(s)
    s.mutate_next(
        "actions/list-workflow-run-artifacts", lambda body: {**body, "artifacts": [{"id": "x"}]}
    )
    call(s, "GET", f"/repos/acme/rag-app/actions/runs/{ids['run']}/artifacts")
    assert s.response_problems and "/actions/runs/" in s.response_problems[0]


def test_a_malformed_error_body_is_caught(validating):
    s = validating
    populate(s)
    s.fail("pulls/get", 500, body={"message": 42})
    call(s, "GET", "/repos/acme/rag-app/pulls/7")
    [problem] = s.response_problems
    assert problem.startswith("GET /repos/acme/rag-app/pulls/7 -> 500: ")
    assert problem.endswith("message: 42 is not of type 'string'")


def test_a_request_outside_the_description_is_caught(validating):
    s = validating
    call(s, "GET", "/repos/acme/rag-app/actions/workflows/ci-eval.yml/runs?status=bogus")
    assert len(s.request_problems) == 1 and "status" in s.request_problems[0]


def test_pagination_links_point_back_at_the_stand_in(standin):
    for i in range(5):
        standin.add_run(fake_sha(f"c{i}"))
    status, headers, body = call(
        standin, "GET", "/repos/acme/rag-app/actions/workflows/ci-eval.yml/runs?per_page=2&page=2"
    )
    assert status == 200 and body["total_count"] == 5 and len(body["workflow_runs"]) == 2
    link = headers["Link"]
    assert (
        f'<{standin.api_url}/repos/acme/rag-app/actions/workflows/ci-eval.yml/runs?per_page=2&page=3>; rel="next"'
        in link
    )
    assert 'rel="last"' in link and 'rel="prev"' in link and 'rel="first"' in link


def test_the_blob_host_refuses_and_reports_an_authorization_header(standin):
    ids = populate(standin)
    status, headers, _ = call(
        standin, "GET", f"/repos/acme/rag-app/actions/artifacts/{ids['artifact']}/zip"
    )
    assert status == 302 and headers["Location"].startswith(standin.blob_url)

    with urllib.request.urlopen(headers["Location"], timeout=10) as response:
        assert response.read() == standin.blob(ids["artifact"])
    assert standin.blob_auth_violations == []

    leaky = urllib.request.Request(
        headers["Location"], headers={"Authorization": f"token {standin.token}"}
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(leaky, timeout=10)
    caught.value.close()
    assert caught.value.code == 400
    assert len(standin.blob_auth_violations) == 1
    with pytest.raises(AssertionError, match="Authorization"):
        standin.assert_clean()


def test_validation_is_skipped_with_a_reason_without_the_reference_data(tmp_path):
    check, reason = github_standin.openapi_check(Path(tmp_path) / "absent.json")
    assert check is None
    assert reason == "reference data ../shared/github/github-rest-subset.openapi.json is absent"
