"""Fixtures of the action's tests: the job's checkout, the base commit's artefact and the
loopback GitHub a job talks to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from action_harness import BASE, CONFIG, GOLD, HEAD, PR, REPO, STRICT_GOLD, clean_environ
from github_standin import GitHubStandIn

from ci_eval.github.artifact_zip import build_zip


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """The job's working directory: a gold set, a passing config and a strict one."""
    root = tmp_path_factory.mktemp("checkout")
    (root / "eval").mkdir()
    (root / "eval" / "gold.json").write_text(json.dumps(GOLD, indent=2) + "\n")
    (root / "eval" / "strict-gold.json").write_text(json.dumps(STRICT_GOLD, indent=2) + "\n")
    (root / "ci-eval.toml").write_text(CONFIG.format(gold="eval/gold.json", gate=""))
    (root / "strict.toml").write_text(
        CONFIG.format(gold="eval/strict-gold.json", gate='[gate]\nmin = { "hit@1" = 0.9 }\n')
    )
    return root


@pytest.fixture(scope="module")
def base_artefact(checkout, tmp_path_factory) -> bytes:
    """What `ci-eval run` wrote for the base commit."""
    out = tmp_path_factory.mktemp("base") / "ci-eval-run.json"
    env = {**clean_environ(), "GITHUB_SHA": BASE, "GITHUB_REF": "refs/heads/main"}
    done = subprocess.run(
        [sys.executable, "-m", "ci_eval", "run", "--out", str(out), "--quiet"],
        cwd=checkout, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    return out.read_bytes()


@pytest.fixture(scope="module")
def base_zip(base_artefact) -> bytes:
    return build_zip({"ci-eval-run.json": base_artefact})


@pytest.fixture
def gh():
    with GitHubStandIn(REPO) as server:
        server.add_pull(PR, head_sha=HEAD, base_sha=BASE)
        yield server
        # Every request the action made, and every answer, matched GitHub's description;
        # the blob host never saw the token.
        server.assert_clean()
