"""A branch's run artefacts fetched from the repository's workflow artifacts, for `ci-eval history`.

The same lookup the action uses for its baseline (github/steps.find_baseline), and the same
trust rules: only successful push runs of the branch whose commit came from the repository
itself (a fork's run is never read), listed newest first through the API's pages; each run's
newest unexpired artifact of the given name, refused over the zip limit, read as the hostile
zip it may be (github/artifact_zip.py). A run whose artifact is gone, missing, too large or
broken is skipped with a warning, as a baseline is; the artefacts themselves are checked by
inputs/history_runs.py when they are read.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path

from ci_eval.errors import InputError
from ci_eval.inputs.history_runs import RunFiles

MAX_RUNS_SCANNED = 300  # listed runs looked at: ten pages of the API's 30, or three of 100


def fetch_artefacts(port, workflow: str, repository: str, branch: str, artifact_name: str, last: int,
                    folder: Path, log: Callable[[str], None], names: dict | None = None) -> int:
    """Write the run artefacts of the branch's ``last`` newest usable runs into ``folder``
    (one ``run-<id>.json`` each); how many were written. ``names``, when given, is told how
    messages name each file: its run, never the temporary file."""
    from ci_eval.core.compare.baseline import baseline_candidates, choose_artifact
    from ci_eval.github.api import ArtifactGone
    from ci_eval.github.artifact_zip import RUN_MEMBER, read_artifact_zip
    from ci_eval.github.job import MAX_ARTIFACT_ZIP
    from ci_eval.github.steps import BUNDLE_MEMBERS

    listed = islice(port.workflow_runs(workflow, branch, event="push", status="success"), MAX_RUNS_SCANNED)
    # no commit of its own to prefer: every usable run of the branch, newest first
    candidates = [run for _, run in baseline_candidates(listed, "", repository, branch)]
    written = 0
    for run in candidates:
        if written == last:
            break
        source = f"run {run.id}"
        try:
            artifact = choose_artifact(port.run_artifacts(run.id), artifact_name)
            if artifact is None:
                log(f"ci-eval: history: run {run.id} has no artifact {artifact_name!r}; skipped")
                continue
            source = f"artifact {artifact_name} (id {artifact.id}) of run {run.id}"
            if artifact.size_in_bytes > MAX_ARTIFACT_ZIP:
                raise InputError(f"the zip is {artifact.size_in_bytes} bytes, over the {MAX_ARTIFACT_ZIP}-byte limit",
                                 source)
            members = read_artifact_zip(port.download_artifact(artifact.id, MAX_ARTIFACT_ZIP), source,
                                        optional=BUNDLE_MEMBERS)
        except ArtifactGone:
            log(f"ci-eval: history: the artifact of run {run.id} is gone; skipped")
            continue
        except InputError as exc:
            log(f"ci-eval: warning: history: skipping run {run.id}: {exc}")
            continue
        (folder / f"run-{run.id}.json").write_bytes(members[RUN_MEMBER])
        if names is not None:
            names[f"run-{run.id}.json"] = f"run {run.id} ({run.html_url})"
        written += 1
        log(f"ci-eval: history: fetched {written}/{last} ({run.html_url})")
    return written


@contextmanager
def branch_artefacts(repository: str, branch: str, workflow: str, artifact_name: str, last: int,
                     env: dict, log: Callable[[str], None]) -> Iterator[RunFiles]:
    """A temporary folder holding the branch's run artefacts, removed afterwards. The token
    is GITHUB_TOKEN, the API GITHUB_API_URL (default https://api.github.com). An artefact
    that a check refuses when it is read is skipped with a warning naming its run, as a
    broken baseline is."""
    from ci_eval.github.api import PyGithubPort, build_client

    token = env.get("GITHUB_TOKEN") or ""
    if not token:
        raise InputError("is not set: reading workflow artifacts needs a token with actions: read", "GITHUB_TOKEN")
    # Reads only, one at a time, as GitHub asks: PyGithub's quarter second between any two
    # requests would add 15 s to reading 30 runs (60 requests), for no limit of GitHub's.
    client = build_client(env.get("GITHUB_API_URL") or "https://api.github.com", token, pace_requests=False)
    port = PyGithubPort(client, repository)
    with tempfile.TemporaryDirectory(prefix="ci-eval-history-") as tmp:
        folder, names = Path(tmp), {}
        if fetch_artefacts(port, workflow, repository, branch, artifact_name, last, folder, log, names) == 0:
            raise InputError(f"has no successful push run of {branch} with an artifact {artifact_name!r}",
                             f"{repository} ({workflow})")
        yield RunFiles(folder, names, skip_broken=True)

