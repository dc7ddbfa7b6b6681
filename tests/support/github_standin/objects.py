"""The JSON GitHub sends for the stand-in's users, repositories, pull requests, workflow
runs, artifacts and comments: every field the OpenAPI schemas require, with realistic values."""

from __future__ import annotations

import hashlib
import urllib.parse
from datetime import timedelta

from .state import EPOCH, RepositoryState, fake_sha, iso


class GitHubObjects(RepositoryState):
    """The state's objects as GitHub's API shapes them; URLs point at this stand-in."""

    api_url: str  # the running API server's, from the stand-in

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

    def label_object(self, name: str, i: int) -> dict:
        base = self.api(f"/repos/{self.repository}")
        return {"id": 7_000 + i, "node_id": f"LA_kwDO{7_000 + i:08d}", "url": f"{base}/labels/{name}",
                "name": name, "description": None, "color": "0e8a16", "default": False}

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
            "labels": [self.label_object(name, i) for i, name in enumerate(pull.get("labels", ()))],
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
            pull = self.pull(number)
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
        run = self.run(artifact["run_id"])
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
            + hashlib.sha256(self.blob(artifact["id"]) or b"").hexdigest(),
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
