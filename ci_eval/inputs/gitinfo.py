"""Which commit a run measured: from the Actions environment, else from git itself."""

from __future__ import annotations

import os
import re
import subprocess

_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def _git(*args: str, cwd: str | None = None) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_info(cwd: str | None = None, env: dict | None = None) -> dict | None:
    env = os.environ if env is None else env
    sha = env.get("GITHUB_SHA") or _git("rev-parse", "HEAD", cwd=cwd)
    if not sha or not _SHA.match(sha):
        return None
    ref = env.get("GITHUB_REF") or _git("symbolic-ref", "-q", "HEAD", cwd=cwd)
    status = _git("status", "--porcelain", "--untracked-files=no", cwd=cwd)
    return {"sha": sha, "ref": ref or None, "dirty": None if status is None else bool(status)}


def git_user_name(cwd: str | None = None) -> str | None:
    """Who is labelling, as git knows them (``git config user.name``)."""
    return _git("config", "user.name", cwd=cwd) or None


def file_commit(path: str) -> dict:
    """``{"commit": sha or None, "changed": bool}`` for a file the run reads: the last commit
    that touched it, and whether it differs from that commit (untracked, modified: written
    by this job, or by hand). Outside git both say nothing (``None``)."""
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    if _git("rev-parse", "--is-inside-work-tree", cwd=folder) != "true":
        return {"commit": None, "changed": None}
    sha = _git("log", "-1", "--format=%H", "--", name, cwd=folder) or None
    status = _git("status", "--porcelain", "--", name, cwd=folder)
    return {"commit": sha if sha and _SHA.match(sha) else None,
            "changed": None if status is None else bool(status) or sha is None}
