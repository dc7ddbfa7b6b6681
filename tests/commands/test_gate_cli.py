"""The per-question gate through the real CLI: a 40-question project with no [gate] table
(the default gate), its retriever run by `ci-eval run`, compared by `ci-eval compare`; losses
accepted by `ci-eval accept`; acceptances that match nothing named by `ci-eval check`."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from suite_paths import REPO_ROOT

K = 5
N = 40
# The project's retriever: each question's gold chunk at the rank its variant gives (absent:
# rank 1; None: not retrieved); "blink" finds it on odd calls and misses it on even ones.
RETRIEVER = '''
import os
import pathlib

RANKS = {ranks}


def search(question, depth, variant="base"):
    qid = question.split()[0]
    rank = RANKS.get(variant, {{}}).get(qid, 1)
    if rank == "blink":
        calls = pathlib.Path(os.environ["BLINK_DIR"]) / qid
        with calls.open("a") as f:
            f.write(".")
        rank = 1 if calls.stat().st_size % 2 else 9
    ids = [f"kb/x{{i}}" for i in range(depth)]
    if rank is not None:
        ids[rank - 1] = f"kb/{{qid}}"
    return [(cid, 100.0 - position) for position, cid in enumerate(ids)]
'''


def qid(i: int) -> str:
    return f"q-{i:03d}"


def project(root: Path, ranks: dict, n: int = N) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "blink").mkdir(exist_ok=True)
    gold = [{"id": qid(i), "question": f"{qid(i)} how do I do thing {i}?", "gold": [f"kb/{qid(i)}"]}
            for i in range(n)]
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": gold}))
    (root / "search.py").write_text(RETRIEVER.format(ranks=repr(ranks)))
    # no [gate] table: the default gate
    (root / "ci-eval.toml").write_text(f'gold_set = "gold.json"\nk = {K}\n[retriever]\ntype = "python"\n'
                                       'target = "search:search"\nparams = { variant = "base" }\n')
    return root


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": os.pathsep.join([str(cwd), str(REPO_ROOT)]), "PATH": "/usr/bin:/bin",
           "HOME": str(cwd), "BLINK_DIR": str(cwd / "blink")}
    return subprocess.run([sys.executable, "-m", "ci_eval", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


def run(root: Path, out: str, variant: str = "base", *extra: str) -> None:
    toml = root / "ci-eval.toml"
    text = toml.read_text()
    toml.write_text(text.replace('variant = "base"', f'variant = "{variant}"'))
    try:
        done = cli("run", "--out", out, "--quiet", *extra, cwd=root)
    finally:
        toml.write_text(text)
    assert done.returncode == 0, done.stderr


def cells(table: str, question: str) -> list[str]:
    """The cells of ``question``'s row in a markdown table."""
    line = next(x for x in table.splitlines() if x.startswith(f"| `{question}`"))
    return [c.strip() for c in line.strip("|").split("|")]


def verdict(out: str) -> str:
    return out.splitlines()[1]


LOST = (qid(3), qid(17))  # the PR pushes these two past k: one to rank 8, one out of the ranking
SEVERE = (LOST[1], LOST[0])  # lists name the one gone from the ranking first


@pytest.fixture(scope="module")
def two_lost(tmp_path_factory) -> Path:
    root = project(tmp_path_factory.mktemp("two-lost"), {"head": {LOST[0]: 8, LOST[1]: None}})
    run(root, "base.json")
    run(root, "head.json", "head")
    return root


def test_two_questions_pushed_past_k_fail_the_default_gate_and_are_named(two_lost):
    r = cli("compare", "base.json", "head.json", cwd=two_lost)
    assert r.returncode == 1, r.stdout + r.stderr
    assert verdict(r.stdout).startswith(f"### ❌ 2 questions lost their gold chunk at k={K}: `{SEVERE[0]}`, `{SEVERE[1]}`")
    # the facts, then the promised metric (hit@5, 40/40 -> 38/40) with its uncertainty
    assert f"hit@{K} fell 1.000 → {(N - 2) / N:.3f} ({-2 / N:+.3f}; " in verdict(r.stdout)
    assert "No significant change" not in verdict(r.stdout) and "within noise" not in verdict(r.stdout)
    assert (f"- ❌ **lost_gold** 2 questions lost their gold chunk at k={K}, not flapping on the base and "
            f"not accepted — `{LOST[0]}`, `{LOST[1]}`") in r.stdout
    assert "(rules from `ci-eval.toml` (no \\[gate\\] table: the default rule))" in r.stdout
    # the exact command that accepts them, and the label
    assert (f"ci-eval accept --reason 'why this change is intended' --loss {LOST[0]} kb/{LOST[0]} 1 8 "
            f"--loss {LOST[1]} kb/{LOST[1]} 1 -") in r.stdout
    assert "label the pull request `retrieval-change-intended`" in r.stdout


def test_accepted_the_same_pr_passes_and_the_comment_shows_them_with_the_reason(two_lost, tmp_path):
    root = tmp_path / "accepted"
    root.mkdir()
    for name in ("gold.json", "search.py", "ci-eval.toml", "base.json", "head.json"):
        (root / name).write_bytes((two_lost / name).read_bytes())
    reason = "new tokenizer: these two are re-labelled next"
    r = cli("accept", *LOST, "--reason", reason, "--base", "base.json", "--head", "head.json", cwd=root)
    assert r.returncode == 0, r.stderr
    written = (root / "accepted.toml").read_text()  # beside the gold set by default
    assert written.index(f'question = "{LOST[0]}"') < written.index(f'question = "{LOST[1]}"')
    assert f'chunk = "kb/{LOST[0]}"\nbase_rank = 1\nhead_rank = 8\n' in written
    assert f'chunk = "kb/{LOST[1]}"\nbase_rank = 1\nreason' in written  # head_rank absent: gone
    r = cli("compare", "base.json", "head.json", cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert verdict(r.stdout).startswith(
        f"### ✅ 2 questions lost their gold chunk at k={K}, both accepted: `{SEVERE[0]}`, `{SEVERE[1]}`")
    assert "Accepted (2), from `accepted.toml`:" in r.stdout
    accepted = r.stdout.split("Accepted (2)", 1)[1].split("\n\n####", 1)[0]
    assert cells(accepted, LOST[0]) == [f"`{LOST[0]}`", f"`kb/{LOST[0]}`", "1 → 8", reason]
    assert cells(accepted, LOST[1]) == [f"`{LOST[1]}`", f"`kb/{LOST[1]}`", "1 → —", reason]

    # the command the failing comment printed, run as printed, writes the same entries
    missing = cli("compare", "base.json", "head.json", "--accepted", "none.toml", cwd=two_lost)
    assert missing.returncode == 2 and "none.toml: acceptance file not found" in missing.stderr
    failing = cli("compare", "base.json", "head.json", cwd=two_lost)
    printed = re.search(r"```sh\n(ci-eval accept .*)\n```", failing.stdout).group(1)
    argv = shlex.split(printed.replace("why this change is intended", reason))[1:]
    (root / "accepted.toml").unlink()
    assert cli(*argv, cwd=root).returncode == 0
    assert (root / "accepted.toml").read_text() == written


def test_a_different_loss_on_an_accepted_question_fails_again(two_lost, tmp_path):
    root = project(tmp_path / "again", {"head": {LOST[0]: 12, LOST[1]: None}})
    (root / "base.json").write_bytes((two_lost / "base.json").read_bytes())
    run(root, "head.json", "head")
    assert cli("accept", "--reason", "meant", "--loss", LOST[0], f"kb/{LOST[0]}", "1", "8",
               "--loss", LOST[1], f"kb/{LOST[1]}", "1", "-", cwd=root).returncode == 0
    r = cli("compare", "base.json", "head.json", cwd=root)
    assert r.returncode == 1, r.stdout + r.stderr
    # q-003 now falls to 12, not to 8: a loss nobody accepted
    assert f"### ❌ 2 questions lost their gold chunk at k={K}: `{LOST[0]}`; accepted: `{LOST[1]}`" in r.stdout
    assert f"Acceptances that matched no loss here: `{LOST[0]}`" in r.stdout


def test_a_pr_gaining_five_and_losing_none_reads_as_an_improvement(tmp_path):
    gained = [qid(i) for i in (2, 9, 11, 25, 38)]
    root = project(tmp_path, {"base": {q: None for q in gained}})
    run(root, "base.json")
    run(root, "head.json", "head")
    r = cli("compare", "base.json", "head.json", cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert verdict(r.stdout).startswith(
        f"### ✅ Retrieval improved: 5 questions gained their gold chunk at k={K}: "
        f"`{gained[0]}`, `{gained[1]}`, `{gained[2]}` (+2 more); none lost.")
    assert f"hit@{K} rose {(N - 5) / N:.3f} → 1.000 ({5 / N:+.3f}; " in verdict(r.stdout)


def test_six_questions_that_all_lose_their_chunk_fail_the_default_gate(tmp_path):
    root = project(tmp_path, {"head": {qid(i): None for i in range(6)}}, n=6)
    run(root, "base.json")
    run(root, "head.json", "head")
    r = cli("compare", "base.json", "head.json", cwd=root)
    assert r.returncode == 1, r.stdout + r.stderr
    assert verdict(r.stdout).startswith(f"### ❌ 6 questions lost their gold chunk at k={K}: ")
    assert "hit@5 fell 1.000 → 0.000" in verdict(r.stdout)


def test_a_loss_on_questions_the_base_records_flapping_passes(tmp_path):
    """Four questions "blink": the base run, repeated (`run --repeat 4`), records their outcome
    changing between passes; the head misses them. The default gate excuses them as flapping
    and says so; without the record the same comparison fails."""
    blink = [qid(i) for i in (1, 12, 23, 34)]
    root = project(tmp_path, {"base": {q: "blink" for q in blink}, "head": {q: 9 for q in blink}})
    run(root, "base.json", "base", "--repeat", "4")
    run(root, "plain-base.json")  # a fresh call count: odd, so found, and no record
    run(root, "head.json", "head")
    recorded = json.loads((root / "base.json").read_text())["repeat"]["flapping"]
    assert sorted(entry[0] for entry in recorded) == blink
    r = cli("compare", "base.json", "head.json", cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert verdict(r.stdout).startswith(
        f"### ✅ 4 questions lost their gold chunk at k={K}, all known to flap on the base branch: ")
    assert "Known to flap on the base branch (4):" in r.stdout
    assert "its outcome changed in 2 of 3 repeated passes of the base run" in r.stdout
    r = cli("compare", "plain-base.json", "head.json", cwd=root)
    assert r.returncode == 1, r.stdout + r.stderr


def test_check_names_acceptances_the_merged_base_no_longer_starts_from(two_lost, tmp_path):
    root = tmp_path / "check"
    root.mkdir()
    for name in ("gold.json", "search.py", "ci-eval.toml", "base.json", "head.json"):
        (root / name).write_bytes((two_lost / name).read_bytes())
    assert cli("accept", "--all", "--reason", "meant", "--base", "base.json", "--head", "head.json",
               cwd=root).returncode == 0
    r = cli("check", "--base", "base.json", cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "accepted.toml: ok (2 acceptance(s), each still names a gold chunk against the base)" in r.stdout
    # merged: the base is now the head, which has those chunks at 8 and nowhere
    r = cli("check", "--base", "head.json", cwd=root)
    assert r.returncode == 1, r.stdout + r.stderr
    assert (f"accepted.toml: acceptance of '{LOST[0]}' matches nothing: the base has kb/{LOST[0]} at rank 8, "
            "not at rank 1: the change is merged, remove the entry") in r.stdout
    assert (f"accepted.toml: acceptance of '{LOST[1]}' matches nothing: the base has kb/{LOST[1]} nowhere in "
            "its ranking, not at rank 1") in r.stdout
    assert "2 of 2 acceptance(s) match nothing" in r.stdout


def test_accept_refuses_what_would_accept_nothing_or_everything_silently(two_lost):
    r = cli("accept", qid(5), "--reason", "meant", "--base", "base.json", "--head", "head.json",
            "--file", "x.toml", cwd=two_lost)
    assert r.returncode == 2 and f"{qid(5)}: lost nothing in this comparison (the losses: {LOST[0]}, {LOST[1]})" in r.stderr
    r = cli("accept", qid(3), "--reason", "  ", "--base", "base.json", "--head", "head.json", cwd=two_lost)
    assert r.returncode == 2 and "--reason must say why" in r.stderr
    r = cli("accept", qid(3), "--reason", "meant", cwd=two_lost)
    assert r.returncode == 2 and "give --base and --head" in r.stderr
    r = cli("accept", "--all", qid(3), "--reason", "meant", "--base", "base.json", "--head", "head.json", cwd=two_lost)
    assert r.returncode == 2 and "not both" in r.stderr
    assert not (two_lost / "x.toml").exists() and not (two_lost / "accepted.toml").exists()
