"""No silent pass, the verdict half: `ci-eval compare` on artefacts that real `ci-eval run`
processes wrote for small projects in tmp folders (a Python retriever of their own), each
case a way the verdict used to read green or "no change" when it should not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from suite_paths import REPO_ROOT

REPO = REPO_ROOT
K = 5

# The project's retriever: a fixed ranking per question, chosen by the `variant` param, so
# base and head differ only by the config, as in a real PR.
RETRIEVER = '''
RANKINGS = {variants}


def search(question, k, variant="base"):
    ids = RANKINGS[variant].get(question, [f"kb/filler{{i}}" for i in range(k)])
    return [(cid, 100.0 - rank) for rank, cid in enumerate(ids[:k])]
'''


def filler(n: int, prefix: str = "kb/x") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def with_at(ranks: dict[str, int], depth: int = 3 * K) -> list[str]:
    """A ranking ``depth`` long with each chunk of ``ranks`` at its 1-based rank."""
    ids = filler(depth)
    for cid, rank in ranks.items():
        ids[rank - 1] = cid
    return ids


def questions(n: int, prefix: str = "q") -> list[dict]:
    return [{"id": f"{prefix}{i}", "question": f"topic {prefix}{i}?", "gold": [f"kb/{prefix}{i}"],
             "tags": ["even" if i % 2 == 0 else "odd"]} for i in range(n)]


def hits(qs: list[dict], rank: int = 1) -> dict[str, list[str]]:
    return {q["question"]: with_at({q["gold"][0]: rank}) for q in qs}


def project(root: Path, gold: list[dict], variants: dict, gate: str = "",
            manifest: dict | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": gold}))
    (root / "search.py").write_text(RETRIEVER.format(variants=repr(variants)))
    index = ""
    if manifest is not None:
        (root / "manifest.json").write_text(json.dumps(manifest))
        index = '[index]\nmanifest = "manifest.json"\n'
    (root / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = {K}\n[retriever]\ntype = "python"\n'
        f'target = "search:search"\nparams = {{ variant = "base" }}\n{index}'
        + (f"[gate]\n{gate}\n" if gate else ""))
    return root


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": os.pathsep.join([str(cwd), str(REPO)]), "PATH": "/usr/bin:/bin",
           "HOME": str(cwd)}
    return subprocess.run([sys.executable, "-m", "ci_eval", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


def run(root: Path, out: str, variant: str = "base") -> Path:
    toml = root / "ci-eval.toml"
    text = toml.read_text()
    toml.write_text(text.replace('variant = "base"', f'variant = "{variant}"'))
    try:
        done = cli("run", "--out", out, "--quiet", cwd=root)
    finally:
        toml.write_text(text)
    assert done.returncode == 0, done.stderr
    return root / out


def gate_lines(md: str) -> list[str]:
    block = md.split("#### Gate:", 1)[1].split("\n\n", 1)[0]
    return [line for line in block.splitlines()[1:] if line.startswith("- ")]


# -- 1. compare uses the discovered config ---------------------------------------------------


@pytest.fixture(scope="module")
def lost_three(tmp_path_factory) -> Path:
    """Ten questions; head loses the gold of three; the project's gate wants hit@5 >= 0.9."""
    qs = questions(10)
    head = {**hits(qs), **{q["question"]: filler(3 * K) for q in qs[:3]}}
    root = project(tmp_path_factory.mktemp("lost"), qs, {"base": hits(qs), "head": head},
                   gate='min = { "hit@5" = 0.9 }')
    run(root, "base.json")
    run(root, "head.json", "head")
    return root


def test_compare_applies_the_projects_gate_without_being_told(lost_three):
    r = cli("compare", "base.json", "head.json", cwd=lost_three)
    assert r.returncode == 1, r.stdout + r.stderr
    hit = (10 - 3) / 10
    verdict = r.stdout.splitlines()[1]
    # the facts first, then the promised metric, then the floor it broke
    assert verdict.startswith("### ❌ 3 questions lost their gold chunk at k=5: `q0` (even), `q1` (odd), `q2` (even)")
    assert f"Gate failed: hit@5 is {hit:.3f}, below the floor 0.900" in verdict
    assert "#### Gate: ❌ failed (rules from `ci-eval.toml`)" in r.stdout


def test_compare_from_a_subfolder_finds_the_projects_config_above_it(lost_three):
    runs = lost_three / "runs"
    runs.mkdir(exist_ok=True)
    for name in ("base.json", "head.json"):
        (runs / name).write_bytes((lost_three / name).read_bytes())
    r = cli("compare", "base.json", "head.json", cwd=runs)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "#### Gate: ❌ failed (rules from `../ci-eval.toml`)" in r.stdout


def test_no_config_opts_out_and_config_overrides(lost_three, tmp_path):
    r = cli("compare", "base.json", "head.json", "--no-config", cwd=lost_three)
    assert r.returncode == 0, r.stderr
    assert "(rules from the flags only (--no-config))" in r.stdout
    lenient = lost_three / "lenient.toml"
    lenient.write_text((lost_three / "ci-eval.toml").read_text().replace("0.9", "0.5"))
    r = cli("compare", "base.json", "head.json", "--config", "lenient.toml", cwd=lost_three)
    assert r.returncode == 0 and "(rules from `lenient.toml`)" in r.stdout


def test_without_a_config_the_default_rule_gates_and_it_says_so(lost_three, tmp_path):
    for name in ("base.json", "head.json"):
        (tmp_path / name).write_bytes((lost_three / name).read_bytes())
    r = cli("compare", "base.json", "head.json", cwd=tmp_path)
    # the three lost questions fail the default per-question rule
    assert r.returncode == 1, r.stderr
    assert "no ci-eval.toml" in r.stderr and "default rule (lost_gold)" in r.stderr
    assert "(rules from the default rule (no config found))" in r.stdout
    assert "❌ **lost_gold** 3 questions lost their gold chunk at k=5" in r.stdout
    r = cli("compare", "base.json", "head.json", "--no-config", cwd=tmp_path)
    assert r.returncode == 0


# -- 2. no comparison is a verdict of its own -----------------------------------------------


@pytest.fixture(scope="module")
def disjoint(tmp_path_factory) -> tuple[Path, Path]:
    """The PR replaces every question of the gold set: nothing in common."""
    before, after = questions(8, "old"), questions(8, "new")
    rankings = {"base": {**hits(before), **hits(after)}}
    root = tmp_path_factory.mktemp("disjoint")
    project(root, before, rankings, gate='max_drop = { "hit@5" = 0.05 }\nmax_new_misses = 0')
    run(root, "base.json")
    project(root, after, rankings, gate='max_drop = { "hit@5" = 0.05 }\nmax_new_misses = 0')
    run(root, "head.json")
    return root


def test_no_shared_question_is_no_comparison_and_relative_rules_fail_closed(disjoint):
    r = cli("compare", "base.json", "head.json", cwd=disjoint)
    assert r.returncode == 1, r.stdout + r.stderr
    verdict = r.stdout.splitlines()[1]
    assert verdict.startswith("### ❌ No comparison possible: different gold sets (sha256 ")
    assert "no question id is in common" in verdict and "No change" not in r.stdout
    assert "max_drop hit@5, max_new_misses cannot be checked (fail closed)" in verdict
    rules = gate_lines(r.stdout)
    assert rules[0] == "- ✅ **errors** the retriever answered every question"
    assert [x.split("**")[1] for x in rules] == ["errors", "max_drop", "max_new_misses"]
    assert all("❌" in x and "no comparison possible" in x for x in rules[1:])
    assert "0 questions compared" in r.stdout.splitlines()[2]


def test_no_comparison_without_relative_rules_passes_but_says_it_compared_nothing(disjoint):
    r = cli("compare", "base.json", "head.json", "--no-config", "--min", "hit@5=0.5",
            cwd=disjoint)
    assert r.returncode == 0, r.stderr
    verdict = r.stdout.splitlines()[1]
    assert verdict.startswith("### ⚠️ No comparison possible: different gold sets")
    assert verdict.endswith("no relative rule is configured, and the floors and errors pass.")
    assert gate_lines(r.stdout)[1] == "- ✅ **min** hit@5 is 1.000, at or above the floor 0.500"


def test_fewer_shared_questions_than_the_minimum_is_no_comparison(tmp_path):
    from ci_eval.core.compare.diff_goldset import MIN_SHARED

    kept = questions(MIN_SHARED - 1)
    gone = questions(MIN_SHARED + 3, "gone")
    rankings = {"base": {**hits(kept), **hits(gone)}}
    project(tmp_path, kept + gone, rankings, gate='max_drop = { "mrr" = 0.0 }')
    run(tmp_path, "base.json")
    project(tmp_path, kept, rankings, gate='max_drop = { "mrr" = 0.0 }')
    run(tmp_path, "head.json")
    r = cli("compare", "base.json", "head.json", cwd=tmp_path)
    assert r.returncode == 1
    assert (f"No comparison possible: only {MIN_SHARED - 1} of the {MIN_SHARED - 1} shared "
            f"questions can be compared; a comparison needs at least {MIN_SHARED}") in r.stdout


def test_an_index_change_that_stales_every_shared_question_is_no_comparison(tmp_path):
    qs = questions(8)
    rankings = {"base": hits(qs)}
    ids = [q["gold"][0] for q in qs] + filler(3 * K)
    project(tmp_path, qs, rankings, gate="max_new_misses = 0",
            manifest={"version": "v1", "ids": ids})
    run(tmp_path, "base.json")
    project(tmp_path, qs, rankings, gate="max_new_misses = 0",
            manifest={"version": "v2", "ids": filler(3 * K)})
    run(tmp_path, "head.json")
    r = cli("compare", "base.json", "head.json", cwd=tmp_path)
    assert r.returncode == 1
    assert ("the index changed (v1 → v2) and every shared question's gold went stale"
            in r.stdout.splitlines()[1])


# -- 3. per-question change over every metric ------------------------------------------------


def test_a_question_is_unchanged_only_when_every_metric_is(tmp_path):
    """Graded, multi-chunk gold: the first gold chunk stays at rank 1 (hit@5 and mrr do
    not move) while the second leaves the top 5 and the third the top 15."""
    qs = questions(8)
    base, head = hits(qs), hits(qs)
    qs[0] = {"id": "q0", "question": "rotate keys?",
             "gold": {"kb/keys": 2, "kb/rotate": 1, "kb/audit": 1}}
    base["rotate keys?"] = with_at({"kb/keys": 1, "kb/rotate": 3, "kb/audit": 4})
    head["rotate keys?"] = with_at({"kb/keys": 1, "kb/rotate": 12}, depth=3 * K)
    project(tmp_path, qs, {"base": base, "head": head})
    run(tmp_path, "base.json")
    run(tmp_path, "head.json", "head")
    r = cli("compare", "base.json", "head.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "No change" not in r.stdout.splitlines()[1]
    # what happened first: no question lost or gained its chunk, one moved within its ranking
    assert r.stdout.splitlines()[1].startswith(
        f"### ✅ No question lost or gained its gold chunk at k={K}; 1 question moved within its ranking")
    row = next(x for x in r.stdout.splitlines() if x.startswith("| `q0`"))
    assert "`kb/audit` (grade 1) rank 4 → gone, left the top 15" in row
    assert "`kb/rotate` (grade 1) rank 3 → 12, left the top 5" in row
    assert f"recall@{K} {-2 / 3:+.3f}" in row
    assert "#### Regressions (1): 0 lost at k=5, 1 with a metric down" in r.stdout
    assert "Unchanged (7: every metric as before)" in r.stdout
    data = json.loads(cli("compare", "base.json", "head.json", "--format", "json",
                          cwd=tmp_path).stdout)
    (q0,) = data["regressions"]
    assert q0["kind"] == "down" and set(q0["worse"]) >= {f"recall@{K}", f"ndcg@{K}", "map"}
    assert "q0" not in data["unchanged"]


# -- 5. warnings reach the comment -----------------------------------------------------------


def test_what_the_run_survived_is_in_the_comment(tmp_path):
    qs = questions(8)
    rankings = hits(qs)
    rankings["topic q1?"] = ["kb/q1", "kb/q1", *filler(3 * K - 2)]  # a duplicate id
    rankings["topic q2?"] = []  # nothing at all
    rankings["topic q3?"] = ["kb/q3", "kb/x1", "kb/x2"]  # fewer than the depth
    project(tmp_path, qs, {"base": hits(qs), "head": rankings})
    run(tmp_path, "base.json")
    run(tmp_path, "head.json", "head")
    r = cli("compare", "base.json", "head.json", cwd=tmp_path)
    section = r.stdout.split("#### Warnings\n", 1)[1].split("\n\n", 1)[0]
    lines = section.splitlines()
    assert "- ⚠️ duplicate ids dropped (first occurrence kept): 1 question, `q1`" in lines
    assert "- ⚠️ no result at all: 1 question, `q2`" in lines
    # the duplicate leaves q1 one short too; q3 returned 3 of the 15 asked for
    assert f"- ⚠️ fewer results than the depth ({3 * K}) asked for: 2 questions, `q1`, `q3`" in lines
