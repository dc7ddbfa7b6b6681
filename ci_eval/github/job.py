"""What every step of `ci-eval action` shares, the sharded ones too (github/steps.py,
github/shard_steps.py): its log line, the commit the job measures, the bound on a
downloaded artifact."""

from __future__ import annotations

import sys

from ci_eval.github.artifact_zip import MAX_COMPRESSED_BYTES
from ci_eval.github.env import Event, safe_log

MAX_ARTIFACT_ZIP = MAX_COMPRESSED_BYTES


def log(line: str) -> None:
    # One write with its newline: the baseline's thread logs while the progress line is
    # written, and print's two writes (the text, then the newline) could be split by it.
    sys.stderr.write(safe_log(line) + "\n")
    sys.stderr.flush()


def job_git(event: Event, env) -> dict | None:
    """The commit this job measures, as the artefact records it."""
    from ci_eval.inputs.gitinfo import git_info

    git = git_info(env=env)
    if git and event.head_sha:
        # On pull_request GITHUB_SHA is a merge commit nobody knows; record the PR's head.
        git = {**git, "sha": event.head_sha}
    if event.name == "push" and git is not None:
        git = {**git, "ref": event.ref}
    return git
