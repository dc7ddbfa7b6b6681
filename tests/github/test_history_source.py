"""`ci-eval history --github`: a branch's run artefacts fetched from the loopback GitHub, a
real process talking real HTTP, with the baseline lookup's trust rules."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from action_harness import REPO, clean_environ
from github_standin import GitHubStandIn, fake_sha
from history_files import write_runs
from projects import cli

from ci_eval.github.artifact_zip import build_zip

PLANS = {"q-breaks": [1, 1, 1, None, None], "q-steady": [1] * 5}
T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def test_the_branch_runs_are_fetched_and_a_fork_or_a_broken_zip_is_not_read(tmp_path):
    paths = write_runs(tmp_path, PLANS)
    shas = [json.loads(p.read_text().split('\n "questions"')[0].rstrip(",") + "}")["git"]["sha"] for p in paths]
    with GitHubStandIn(REPO) as gh:
        for r, path in enumerate(paths):
            run = gh.add_run(shas[r], created_at=T0 + timedelta(hours=r))
            gh.add_artifact(run, build_zip({"ci-eval-run.json": path.read_bytes()}))
        # newer than all of them: a fork's run on a branch called main, and a run with a broken zip
        fork = gh.add_run(fake_sha("fork"), head_repo="someone/rag-app", created_at=T0 + timedelta(days=1))
        gh.add_artifact(fork, build_zip({"ci-eval-run.json": paths[0].read_bytes()}))
        broken = gh.add_run(fake_sha("broken"), created_at=T0 + timedelta(days=2))
        gh.add_artifact(broken, b"not a zip")
        env = {**clean_environ(), "GITHUB_TOKEN": gh.token, "GITHUB_API_URL": gh.api_url}
        done = cli("history", "--github", REPO, "--branch", "main", "--format", "json", cwd=tmp_path, env=env)
        gh.assert_clean()
        asked = [r.path for r in gh.requests]
    fetched = [path for path in asked if path.endswith("/zip")]
    assert done.returncode == 0, done.stderr
    history = json.loads(done.stdout)
    assert [run["sha"] for run in history["runs"]] == shas
    breaks = next(q for q in history["questions"] if q["id"] == "q-breaks")
    assert breaks["broken_by"] == {"run": 4, "sha": shas[3]}
    assert f"skipping run {broken}" in done.stderr
    assert not any(f"/runs/{fork}/" in path for path in asked)  # a fork's run is never even opened
    assert len(fetched) == len(paths) + 1  # the broken one was downloaded and refused


def test_a_broken_artefact_in_a_valid_zip_is_skipped_naming_its_run(tmp_path):
    paths = write_runs(tmp_path, PLANS)
    shas = [json.loads(p.read_text().split('\n "questions"')[0].rstrip(",") + "}")["git"]["sha"] for p in paths]
    truncated = paths[2].read_bytes()[:-40]  # a row cut short: a zip that opens, an artefact that does not read
    gold = json.dumps({"schema_version": 1, "questions": [{"id": "q", "question": "?", "gold": ["c"]}]}).encode()
    with GitHubStandIn(REPO) as gh:
        runs = []
        for r, path in enumerate(paths):
            runs.append(gh.add_run(shas[r], created_at=T0 + timedelta(hours=r)))
            gh.add_artifact(runs[-1], build_zip({"ci-eval-run.json": truncated if r == 2 else path.read_bytes()}))
        stray = gh.add_run(fake_sha("stray"), created_at=T0 + timedelta(days=1))
        gh.add_artifact(stray, build_zip({"ci-eval-run.json": gold}))
        env = {**clean_environ(), "GITHUB_TOKEN": gh.token, "GITHUB_API_URL": gh.api_url}
        done = cli("history", "--github", REPO, "--format", "json", "--quiet", cwd=tmp_path, env=env)
        gh.assert_clean()
    assert done.returncode == 0, done.stderr
    assert [run["sha"] for run in json.loads(done.stdout)["runs"]] == shas[:2] + shas[3:]
    warnings = done.stderr.splitlines()
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith(f"ci-eval: warning: history: skipping run {stray} (") and "not a run artefact" in warnings[0]
    assert warnings[1].startswith(f"ci-eval: warning: history: skipping run {runs[2]} (")
    assert warnings[1].count(f"run {runs[2]}") == 1 and "invalid JSON" in warnings[1]
    assert "ci-eval-history-" not in done.stderr  # never the temporary file, gone by then


def test_no_token_or_no_runs_is_one_line_exit_2(tmp_path):
    with GitHubStandIn(REPO) as gh:
        env = {**clean_environ(), "GITHUB_API_URL": gh.api_url}
        env.pop("GITHUB_TOKEN", None)
        done = cli("history", "--github", REPO, cwd=tmp_path, env=env)
        assert done.returncode == 2 and "GITHUB_TOKEN" in done.stderr and done.stderr.count("\n") == 1
        done = cli("history", "--github", REPO, cwd=tmp_path, env={**env, "GITHUB_TOKEN": gh.token})
        assert done.returncode == 2 and "no successful push run of main" in done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith("ci-eval:")
    done = cli("history", cwd=tmp_path)
    assert done.returncode == 2 and "FOLDER or --github" in done.stderr


def test_the_reads_are_not_spaced_out(tmp_path, monkeypatch):
    # Reads only, one at a time: PyGithub's quarter second between requests would add 15 s
    # to reading 30 runs. The client is built without it; the runs are still all read.
    from ci_eval.github import api
    from ci_eval.github.history_source import branch_artefacts

    built = []

    def spy(*args, **kwargs):
        client = real(*args, **kwargs)
        built.append(client.requester)
        return client

    real = api.build_client
    monkeypatch.setattr(api, "build_client", spy)
    paths = write_runs(tmp_path, PLANS)
    shas = [json.loads(p.read_text().split('\n "questions"')[0].rstrip(",") + "}")["git"]["sha"] for p in paths]
    with GitHubStandIn(REPO) as gh:
        for r, path in enumerate(paths):
            gh.add_artifact(gh.add_run(shas[r], created_at=T0 + timedelta(hours=r)),
                            build_zip({"ci-eval-run.json": path.read_bytes()}))
        env = {"GITHUB_TOKEN": gh.token, "GITHUB_API_URL": gh.api_url}
        with branch_artefacts(REPO, "main", "ci-eval.yml", "ci-eval", 30, env, lambda line: None) as files:
            assert len(list(files.folder.glob("run-*.json"))) == len(paths)
    [requester] = built
    assert requester._Requester__seconds_between_requests is None
