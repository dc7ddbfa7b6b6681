"""Sharding: one job against N shards, the merge at scale, and peak memory of run, merge
and compare, each command a whole process.

    python benchmarks/bench_shards.py                  # 4,000 x 50 ms and 100,000 instant
    python benchmarks/bench_shards.py --slow 400 --scale 10000   # a quick look

100,000 questions against a 50 ms retriever is 21 minutes at concurrency 4 on one job: too
long for this shared machine. The slow figure is measured at ``--slow`` questions (1 job,
then the 8 shards one after another, as 8 runners would run them side by side) and scaled
linearly to 100,000, labelled as such; the merge, and every peak, are measured at
``--scale`` questions with an instant retriever. Peak memory is the child's ru_maxrss, read
in a fresh wrapper process per command so no earlier peak is counted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = 100_000
LATENCY_S = 0.05
CONCURRENCY = 4  # the retriever's default `concurrency`

RETRIEVERS = f"LATENCY_S = {LATENCY_S!r}\n" + textwrap.dedent(
    """
    import time
    RANKED = [(f"c{j}", 1.0 / (j + 1)) for j in range(15)]
    def slow(question, k):
        time.sleep(LATENCY_S)
        return RANKED
    def instant(question, k):
        return RANKED
    """
)

# Runs one command and prints its wall time and peak RSS (its own, not this wrapper's).
_MEASURE = textwrap.dedent(
    """
    import json, resource, subprocess, sys, time
    start = time.perf_counter()
    done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"code": done.returncode, "seconds": seconds, "peak_mb": peak,
                      "stderr": done.stderr.decode()[-500:]}))
    """
)


def _project(root: Path, questions: int, target: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "bench_retrievers.py").write_text(RETRIEVERS)
    rows = [{"id": f"q{i:07d}", "question": f"question number {i}", "gold": [f"c{i % 23}"],
             "tags": [f"t{i % 5}"]} for i in range(questions)]
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": rows}))
    (root / "index.json").write_text(json.dumps({"version": "v1", "ids": [f"c{j}" for j in range(40)]}))
    (root / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = 5\n[retriever]\ntype = "python"\ntarget = "bench_retrievers:{target}"\n'
        f'concurrency = {CONCURRENCY}\n[index]\nmanifest = "index.json"\n')
    return root


def _measure(root: Path, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO)])}
    argv = [sys.executable, "-c", _MEASURE, sys.executable, "-m", "ci_eval", *args]
    out = json.loads(subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=True).stdout)
    if out["code"] not in (0, 1):
        raise RuntimeError(f"ci-eval {' '.join(args)} exited {out['code']}: {out['stderr']}")
    return out


def _whole_parts_merge(root: Path, count: int) -> tuple[dict, list[dict], dict]:
    """One unsharded run, ``count`` shard runs one after another, then their merge."""
    whole = _measure(root, "run", "--quiet", "--out", "whole.json")
    parts = [_measure(root, "run", "--quiet", "--shard", f"{i}/{count}", "--out", f"part-{i}.json")
             for i in range(1, count + 1)]
    merge = _measure(root, "merge", *[f"part-{i}.json" for i in range(1, count + 1)], "--out", "merged.json")
    return whole, parts, merge


def one_job_vs_shards(questions: int, shards: int = 8) -> dict:
    """Wall time of one job against the slowest of ``shards`` jobs plus the merge."""
    with tempfile.TemporaryDirectory() as tmp:
        whole, parts, merge = _whole_parts_merge(_project(Path(tmp), questions, "slow"), shards)
    slowest = max(p["seconds"] for p in parts)
    scale = TARGET / questions
    return {
        "questions": questions, "shards": shards, "latency_ms": LATENCY_S * 1000, "concurrency": CONCURRENCY,
        "one_job_s": whole["seconds"], "ideal_one_job_s": questions * LATENCY_S / CONCURRENCY,
        "shard_s": [round(p["seconds"], 2) for p in parts], "slowest_shard_s": slowest,
        "merge_s": merge["seconds"], "sharded_s": slowest + merge["seconds"],
        "speed_up": whole["seconds"] / (slowest + merge["seconds"]),
        "extrapolated_to": TARGET,
        "extrapolated_one_job_s": whole["seconds"] * scale,
        "extrapolated_slowest_shard_s": slowest * scale,
    }


def at_scale(questions: int, shards: int = 8) -> dict:
    """An instant retriever at ``questions``: peaks of run, merge and compare, merge time."""
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp), questions, "instant")
        run, parts, merge = _whole_parts_merge(root, shards)
        compare = _measure(root, "compare", "whole.json", "merged.json", "--format", "json")
        sizes = {name: (root / name).stat().st_size / 2**20 for name in ("whole.json", "merged.json", "part-1.json")}
        whole = json.loads((root / "whole.json").read_text())
        merged = json.loads((root / "merged.json").read_text())
        same = whole["summary"]["overall"] == merged["summary"]["overall"]
    return {
        "questions": questions, "shards": shards,
        "run": {"seconds": run["seconds"], "peak_mb": run["peak_mb"]},
        "shard_run_peak_mb": max(p["peak_mb"] for p in parts),
        "merge": {"seconds": merge["seconds"], "peak_mb": merge["peak_mb"]},
        "compare": {"seconds": compare["seconds"], "peak_mb": compare["peak_mb"]},
        "artefact_mb": round(sizes["whole.json"], 1), "part_mb": round(sizes["part-1.json"], 1),
        "merged_means_equal_unsharded": same,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark sharded runs and the merge.")
    parser.add_argument("--slow", type=int, default=4000, help="questions for the 50 ms comparison")
    parser.add_argument("--scale", type=int, default=TARGET, help="questions for the merge and memory figures")
    parser.add_argument("--shards", type=int, default=8)
    args = parser.parse_args(argv)
    print(json.dumps({"one_job_vs_shards": one_job_vs_shards(args.slow, args.shards),
                      "at_scale": at_scale(args.scale, args.shards)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
