"""Thirty push runs of main through the real action (action.yml's own steps) and the loopback
GitHub, each run's artifact stored as upload-artifact stores it; then `ci-eval history` over
those artifacts' run artefacts names the question that broke at run 17, with its commit, and
the one that flaps."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta

from action_harness import add_push_run, push_event, run_action
from github_standin import fake_sha
from projects import cli

RUNS, BREAKS = 30, 17  # 1-based: the retriever loses alpha from run 17 on

GOLD = {"schema_version": 1, "questions": [
    {"id": "q-breaks", "question": "alpha please", "gold": ["alpha"], "tags": ["greek"]},
    {"id": "q-flaps", "question": "gamma please", "gold": ["gamma"], "tags": ["greek"]},
    *({"id": f"q-{w}", "question": f"{w} please", "gold": [w]} for w in ("beta", "delta", "epsilon", "zeta")),
]}

# Reads the run number the test writes beside it: a commit that drops alpha from the index at
# run 17, and an approximate index that loses gamma every third run.
RETRIEVER = '''
from pathlib import Path

CHUNKS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]


def search(question, k):
    run = int(Path(__file__).with_name("run-number.txt").read_text())
    first = question.split()[0]
    lost = {"alpha"} if run >= 17 else set()
    if run % 3 == 2:
        lost.add("gamma")
    ranked = [c for c in CHUNKS if c not in lost]
    ranked.sort(key=lambda c: c != first)
    return [(c, 1.0 - i / 10) for i, c in enumerate(ranked[:k])]
'''

CONFIG = '''gold_set = "gold.json"
k = 1

[retriever]
type = "python"
target = "drifting:search"
'''


def sha(run: int) -> str:
    return fake_sha(f"main-{run}")


def test_thirty_action_runs_then_history_names_the_break_and_the_flap(gh, tmp_path):
    project = tmp_path / "checkout"
    project.mkdir()
    (project / "gold.json").write_text(json.dumps(GOLD))
    (project / "ci-eval.toml").write_text(CONFIG)
    (project / "drifting.py").write_text(RETRIEVER)
    artefacts = tmp_path / "artefacts"
    artefacts.mkdir()
    for run in range(1, RUNS + 1):
        (project / "run-number.txt").write_text(str(run))
        job = run_action(gh, tmp_path / "jobs", project, "push", push_event(sha(run)), sha=sha(run),
                         ref="refs/heads/main", comment="off")
        assert job.code == 0, job.stderr
        stored = job.bundle_zip()
        add_push_run(gh, sha(run), stored, timedelta(minutes=RUNS - run))
        with zipfile.ZipFile(io.BytesIO(stored)) as archive:  # as a user downloads it
            (artefacts / f"{sha(run)[:8]}.json").write_bytes(archive.read("ci-eval-run.json"))

    done = cli("history", str(artefacts), "--format", "json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    history = json.loads(done.stdout)
    assert [r["sha"] for r in history["runs"]] == [sha(run) for run in range(1, RUNS + 1)]
    questions = {q["id"]: q for q in history["questions"]}
    assert questions["q-breaks"]["broken_by"] == {"run": BREAKS, "sha": sha(BREAKS)}
    assert questions["q-breaks"]["hit"] == [run < BREAKS for run in range(1, RUNS + 1)]
    assert not questions["q-breaks"]["flapping"]
    flaps = questions["q-flaps"]
    assert flaps["flapping"] and flaps["broken_by"] is None
    assert flaps["misses"] == sum(run % 3 == 2 for run in range(1, RUNS + 1))
    assert not any(q["flapping"] or q["failing_since"] for qid, q in questions.items()
                   if qid not in ("q-breaks", "q-flaps"))

    markdown = cli("history", str(artefacts), "--quiet", cwd=tmp_path).stdout
    failing = markdown.split("### Failing now")[1].split("###")[0]
    assert f"| `q-breaks` | run {BREAKS} (`{sha(BREAKS)[:7]}`) | run {BREAKS} (`{sha(BREAKS)[:7]}`)" in failing
    flapping = markdown.split("### Flapping")[1].split("###")[0]
    assert "`q-flaps`" in flapping and "q-breaks" not in flapping
