"""What the loopback GitHub holds for one repository: pull requests, workflow runs, their
artifacts (listing and zip bytes) and issue comments, with the calls a test sets them up
and reads them back with. Objects here are plain dicts in the stand-in's own field names;
objects.py turns them into the JSON GitHub sends."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone

BOT_LOGIN = "github-actions[bot]"
EPOCH = datetime(2026, 11, 2, 9, 0, 0, tzinfo=timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fake_sha(seed: str) -> str:
    return hashlib.sha1(seed.encode()).hexdigest()


def workflow_id(workflow: str) -> int:
    return 160_000 + int(fake_sha(workflow)[:4], 16)


@dataclass
class _Contents:
    pulls: dict[int, dict] = field(default_factory=dict)
    runs: dict[int, dict] = field(default_factory=dict)
    artifacts: dict[int, dict] = field(default_factory=dict)
    blobs: dict[int, bytes] = field(default_factory=dict)
    comments: dict[int, dict] = field(default_factory=dict)


class RepositoryState:
    """One repository's contents. The stand-in's routes read and change it only through
    these methods, as the tests do."""

    def __init__(self, repository: str):
        self.owner, self.name = repository.split("/")
        self.repository = repository
        self.repo_id = 700_001
        self.bot_login = BOT_LOGIN
        self._contents = _Contents()
        self._ids = 1000
        self._lock = threading.RLock()

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    # -- set-up ----------------------------------------------------------------------------

    def add_pull(
        self,
        number: int,
        head_sha: str,
        base_sha: str,
        base_ref: str = "main",
        head_ref: str = "feature",
        head_repo: str | None = None,
        title: str = "Tune the chunker",
        labels: tuple[str, ...] = (),
    ) -> dict:
        """A pull request; ``head_repo`` names a fork ("someone/rag-app"), default this repo;
        ``labels``: the names of the labels a maintainer put on it."""
        pull = {
            "labels": tuple(labels),
            "number": number,
            "head_sha": head_sha,
            "base_sha": base_sha,
            "base_ref": base_ref,
            "head_ref": head_ref,
            "head_repo": head_repo or self.repository,
            "title": title,
        }
        self._contents.pulls[number] = pull
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
        self._contents.runs[run_id] = {
            "id": run_id,
            "head_sha": head_sha,
            "head_branch": head_branch,
            "event": event,
            "conclusion": conclusion,
            "status": "completed" if conclusion else "in_progress",
            "head_repo": head_repo or self.repository,
            "created_at": created_at or EPOCH,
            "workflow": workflow,
            "workflow_id": workflow_id(workflow),
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
        run = self._contents.runs[run_id]
        self._contents.artifacts[artifact_id] = {
            "id": artifact_id,
            "run_id": run_id,
            "name": name,
            "expired": expired,
            "size": len(zip_bytes),
            "created_at": run["created_at"],
        }
        self._contents.blobs[artifact_id] = zip_bytes
        return artifact_id

    def change_artifact(
        self, artifact_id: int, expired: bool | None = None, listed_size: int | None = None
    ) -> None:
        """Expire an artifact after the fact, or list it with another size than its zip's."""
        artifact = self._contents.artifacts[artifact_id]
        if expired is not None:
            artifact["expired"] = expired
        if listed_size is not None:
            artifact["size"] = listed_size

    def add_comment(
        self,
        issue_number: int,
        body: str,
        user_login: str | None = None,
        created_at: datetime | None = None,
    ) -> int:
        comment_id = self._next_id()
        login = user_login or self.bot_login
        self._contents.comments[comment_id] = {
            "id": comment_id,
            "issue": issue_number,
            "body": body,
            "login": login,
            "created_at": created_at or EPOCH,
            "updated_at": created_at or EPOCH,
        }
        return comment_id

    def edit_comment(self, comment_id: int, body: str, updated_at: datetime) -> dict:
        comment = self._contents.comments[comment_id]
        comment["body"] = body
        comment["updated_at"] = updated_at
        return comment

    def delete_comment(self, comment_id: int) -> None:
        del self._contents.comments[comment_id]

    def clear_comments(self) -> None:
        """Forget every comment (a benchmark's runs each post a new one)."""
        self._contents.comments.clear()

    # -- reading back ----------------------------------------------------------------------

    def pull(self, number: int) -> dict | None:
        return self._contents.pulls.get(number)

    def run(self, run_id: int) -> dict | None:
        return self._contents.runs.get(run_id)

    def runs(self) -> list[dict]:
        return list(self._contents.runs.values())

    def artifact(self, artifact_id: int) -> dict | None:
        return self._contents.artifacts.get(artifact_id)

    def artifacts_of(self, run_id: int) -> list[dict]:
        """The run's artifacts, oldest first."""
        return [a for _, a in sorted(self._contents.artifacts.items()) if a["run_id"] == run_id]

    def blob(self, artifact_id: int) -> bytes | None:
        """The zip bytes the storage host serves for the artifact."""
        return self._contents.blobs.get(artifact_id)

    def comment(self, comment_id: int) -> dict | None:
        return self._contents.comments.get(comment_id)

    def comments_on(self, issue_number: int) -> list[dict]:
        return [c for _, c in sorted(self._contents.comments.items()) if c["issue"] == issue_number]
