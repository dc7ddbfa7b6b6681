"""Workflow runs and their artifacts; an artifact's zip is a redirect to the storage host."""

from __future__ import annotations

from ..state import fake_sha
from .common import SEG, Answer, Request, error, not_found, page


def _runs(request: Request, workflow: str | None) -> list[dict]:
    query = request.query
    runs = request.standin.runs()
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


def _run_listing(request: Request, runs: list[dict]) -> Answer:
    chunk, headers = page(request, runs)
    s = request.standin
    return (
        200,
        {"total_count": len(runs), "workflow_runs": [s.run_object(r) for r in chunk]},
        headers,
    )


def list_workflow_runs(request: Request) -> Answer:
    return _run_listing(request, _runs(request, request.rest[0]))


def list_runs_for_repo(request: Request) -> Answer:
    return _run_listing(request, _runs(request, None))


def get_run(request: Request) -> Answer:
    run = request.standin.run(int(request.rest[0]))
    return (200, request.standin.run_object(run), {}) if run else not_found()


def list_run_artifacts(request: Request) -> Answer:
    s = request.standin
    run_id = int(request.rest[0])
    if s.run(run_id) is None:
        return not_found()
    items = s.artifacts_of(run_id)
    if "name" in request.query:
        items = [a for a in items if a["name"] == request.query["name"]]
    chunk, headers = page(request, items)
    return (
        200,
        {"total_count": len(items), "artifacts": [s.artifact_object(a) for a in chunk]},
        headers,
    )


def get_artifact(request: Request) -> Answer:
    artifact = request.standin.artifact(int(request.rest[0]))
    return (200, request.standin.artifact_object(artifact), {}) if artifact else not_found()


def download_artifact(request: Request) -> Answer:
    s = request.standin
    artifact = s.artifact(int(request.rest[0]))
    if artifact is None or request.rest[1] != "zip":
        return not_found()
    if artifact["expired"]:
        return error(410, "Artifact has expired")
    # A short-lived signed URL on another host, as GitHub hands out for its storage.
    signature = fake_sha(f"{artifact['id']}{len(s.requests)}")
    location = f"{s.blob_url}/artifacts/{artifact['id']}/ci-eval.zip?sig={signature}&se=2026-11-30T02%3A01%3A00Z"
    return 302, None, {"Location": location}


ROUTES = [
    ("GET", rf"^/repos/{SEG}/{SEG}/actions/workflows/{SEG}/runs$", "actions/list-workflow-runs",
     list_workflow_runs),
    ("GET", rf"^/repos/{SEG}/{SEG}/actions/runs$", "actions/list-workflow-runs-for-repo", list_runs_for_repo),
    ("GET", rf"^/repos/{SEG}/{SEG}/actions/runs/(\d+)$", "actions/get-workflow-run", get_run),
    ("GET", rf"^/repos/{SEG}/{SEG}/actions/runs/(\d+)/artifacts$", "actions/list-workflow-run-artifacts",
     list_run_artifacts),
    ("GET", rf"^/repos/{SEG}/{SEG}/actions/artifacts/(\d+)$", "actions/get-artifact", get_artifact),
    ("GET", rf"^/repos/{SEG}/{SEG}/actions/artifacts/(\d+)/{SEG}$", "actions/download-artifact",
     download_artifact),
]
