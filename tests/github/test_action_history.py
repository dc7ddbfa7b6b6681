"""Ten push runs of main through the real action (action.yml's own steps) and the loopback
GitHub, each run's artifact stored as upload-artifact stores it; then `ci-eval history` over
those artifacts' run artefacts names the question that broke at run 6, with its commit, and
the one that flaps; and a pull request's comment, read from the window the push runs kept
(ci-eval-questions.json), says the same beside its regressions."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta

from action_harness import add_push_run, bodies, pr_event, push_event, run_action
from github_standin import fake_sha
from projects import cli

# Ten runs show a break and a flap (three changes or more); the window's cap of 30 runs is
# tests/core/compare/test_recent_runs.py's. Each run is a whole action, about 0.7 s.
RUNS, BREAKS = 10, 6  # 1-based: the retriever loses alpha from run 6 on

GOLD = {"schema_version": 1, "questions": [
    {"id": "q-breaks", "question": "alpha please", "gold": ["alpha"], "tags": ["greek"]},
    {"id": "q-flaps", "question": "gamma please", "gold": ["gamma"], "tags": ["greek"]},
    *({"id": f"q-{w}", "question": f"{w} please", "gold": [w]} for w in ("beta", "delta", "epsilon", "zeta")),
]}

# Reads the run number the test writes beside it: a commit that drops alpha from the index at
# run BREAKS, and an approximate index that loses gamma every third run.
RETRIEVER = '''
from pathlib import Path

CHUNKS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]


def search(question, k):
    run = int(Path(__file__).with_name("run-number.txt").read_text())
    first = question.split()[0]
    lost = {"alpha"} if run >= BREAKS else set()
    extra = Path(__file__).with_name("extra-lost.txt")  # what a pull request's change loses
    if extra.exists():
        lost.add(extra.read_text().strip())
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


def test_ten_push_runs_then_history_names_the_break_and_the_flap(gh, tmp_path):
    project = tmp_path / "checkout"
    project.mkdir()
    (project / "gold.json").write_text(json.dumps(GOLD))
    (project / "ci-eval.toml").write_text(CONFIG)
    (project / "drifting.py").write_text(f"BREAKS = {BREAKS}\n" + RETRIEVER)
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

    # The window each push run kept: the newest holds all the runs, a question's states one a run.
    with zipfile.ZipFile(io.BytesIO(stored)) as archive:
        window = json.loads(archive.read("ci-eval-questions.json"))
    assert [commit for commit, _ in window["runs"]] == [sha(run) for run in range(1, RUNS + 1)]
    assert window["states"]["q-breaks"] == "1" * (BREAKS - 1) + "0" * (RUNS - BREAKS + 1)
    assert window["states"]["q-flaps"] == "".join("0" if run % 3 == 2 else "1" for run in range(1, RUNS + 1))

    # A pull request on main's newest commit whose change loses beta, run when gamma is lost too.
    (project / "run-number.txt").write_text("32")
    (project / "extra-lost.txt").write_text("beta")
    job = run_action(gh, tmp_path / "jobs", project, "pull_request",
                     pr_event(head_sha=fake_sha("pr"), base_sha=sha(RUNS)))
    assert job.code in (0, 1), job.stderr
    [body] = bodies(gh)
    rows = {line.split("|")[1].split()[0]: line for line in body.splitlines() if line.startswith("| `q-")}
    flap_misses = sum(run % 3 == 2 for run in range(1, RUNS + 1))
    assert f"(flapping on main: missed in {flap_misses} of the last {RUNS} runs, possibly noise)" in rows["`q-flaps`"]
    assert f"(retrieved in the last {RUNS} runs on main)" in rows["`q-beta`"]
    assert "`q-breaks`" not in rows  # missed at the base too: not this PR's regression
    since = RUNS - BREAKS + 1
    assert (f"**Failing on main** (1, retrieved there before): `q-breaks` since `{sha(BREAKS)[:7]}` "
            f"(missed in the last {since} runs)") in body
    greek = next(line for line in body.splitlines() if line.startswith("**By tag**"))
    # greek is q-breaks and q-flaps: both retrieved at run 1, only q-flaps at the last run
    assert greek.startswith(f"**By tag** hit@1 over the last {RUNS} runs on main: `greek` ")
    assert greek.endswith("1.000 → 0.500")
