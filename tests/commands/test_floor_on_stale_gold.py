"""A floor's failure on a head whose measured questions lost part of their gold to a
re-ingestion says what the mean is over, rather than reading as a collapse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from run_files import read_run

# Seven questions, each with two gold chunks; a re-ingestion renamed the second chunk of
# five of them (kb/<i>b -> kb/<i>b2), and the retriever now finds it under its new name.
QUESTIONS = 7
RENAMED = 5


def project(root: Path) -> None:
    gold = [{"id": f"q{i}", "question": f"question {i}", "gold": [f"kb/{i}a", f"kb/{i}b"]} for i in range(QUESTIONS)]
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": gold}))
    index = [f"kb/{i}a" for i in range(QUESTIONS)]
    index += [f"kb/{i}b2" if i < RENAMED else f"kb/{i}b" for i in range(QUESTIONS)]
    (root / "index.txt").write_text("\n".join(index) + "\n")
    answers = [{"id": f"q{i}", "results": [[f"kb/{i}b2" if i < RENAMED else f"kb/{i}b", 1.0]]}
               for i in range(QUESTIONS)]
    (root / "run.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    (root / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "run-file"\n'
                                       'path = "run.jsonl"\n[index]\nmanifest = "index.txt"\n')


def cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ), timeout=120, check=False)


def test_a_floor_failed_over_partly_stale_questions_says_so(tmp_path):
    project(tmp_path)
    assert cli("run", "--out", "head.json", "--quiet", cwd=tmp_path).returncode == 0
    head = read_run(tmp_path / "head.json")
    # each renamed question keeps kb/<i>a live, so it is measured: a miss at k=1
    assert [q["status"] for q in head["questions"]] == ["ok"] * QUESTIONS
    mean = (QUESTIONS - RENAMED) / QUESTIONS
    assert abs(head["summary"]["overall"]["means"]["hit@1"] - mean) < 1e-9
    out = cli("compare", "--no-base", "head.json", "--no-config", "--min", "hit@1=0.8", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    clause = (f"(a mean over {QUESTIONS} measured questions; {RENAMED} of those under the floor have gold ids "
              "missing from the index: the chunks those ids named count as misses until the gold set is "
              "re-validated")
    verdict = next(line for line in out.stdout.splitlines() if line.startswith("### "))
    assert verdict.startswith(f"### ❌ Below the floor: hit@1 is {mean:.3f} (floor 0.800) {clause}")
    assert f"hit@1 is {mean:.3f}, below the floor 0.800 {clause}" in out.stdout  # the gate's rule

