"""Benchmarks of the PR job's own costs: runner concurrency, memory, start-up, install.

Each function returns a dict of figures; ``benchmarks/run.py`` prints them all. Runnable
alone: ``python benchmarks/bench_pipeline.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _sleepy(question: str, k: int):
    time.sleep(0.05)
    return [(f"c{i}", 1.0 / (i + 1)) for i in range(k)]


def runner_concurrency(questions: int = 1000, concurrency: int = 16, latency: float = 0.05) -> dict:
    """1,000 questions against a retriever that takes 50 ms each, 16 at a time."""
    from ci_eval.retrieval.python_runner import run_callable
    from ci_eval.retrieval.query import Query

    queries = [Query(f"q{i}", f"question {i}") for i in range(questions)]
    start = time.perf_counter()
    done = sum(1 for _ in run_callable(_sleepy, queries, 15, concurrency=concurrency, timeout=30))
    elapsed = time.perf_counter() - start
    ideal = questions * latency / concurrency
    assert done == questions
    return {"questions": questions, "concurrency": concurrency, "seconds": elapsed,
            "ideal_seconds": ideal, "ratio_to_ideal": elapsed / ideal, "goal_ratio": 1.25}


_MEMORY_SCRIPT = textwrap.dedent(
    """
    import json, resource, sys, tempfile
    from ci_eval.core.gold.goldset import GoldSet, Question
    from ci_eval.core.artefact.evaluation import evaluate
    from ci_eval.core.artefact.artefact import dumps
    from ci_eval.retrieval.python_runner import run_callable
    from ci_eval.retrieval.query import Query

    n = int(sys.argv[1])
    gold = GoldSet(1, "v", tuple(Question(f"q{i}", f"question {i}", ((f"c{i % 97}", 1),)) for i in range(n)))
    ranked = [(f"c{j}", 1.0 / (j + 1)) for j in range(15)]
    def instant(question, k):
        return ranked
    stream = run_callable(instant, [Query(q.id, q.question) for q in gold.questions], 15, concurrency=8)
    metrics = ("hit@5", "recall@5", "precision@5", "ndcg@5", "mrr", "hit@15", "recall@15", "precision@15", "ndcg@15", "map")
    result = evaluate(gold, stream, k=5, metrics=metrics)
    text = dumps({"questions": result.questions, "summary": result.summary})
    # VmHWM belongs to this process image; ru_maxrss would carry over a large parent's peak.
    try:
        hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
        peak = int(hwm.split()[1]) / 1024
    except (OSError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak_mb": peak, "artefact_mb": len(text.encode()) / 2**20}))
    """
)


def memory(sizes=(10_000, 100_000)) -> dict:
    """Peak RSS of a whole evaluation (runner, metrics, artefact text) at two sizes."""
    out = {}
    for n in sizes:
        proc = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, str(n)], capture_output=True,
                              text=True, check=True, cwd=REPO)
        out[n] = json.loads(proc.stdout)
    return out


def _best_of(argv, runs: int = 7, env=None) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def startup() -> dict:
    """`ci-eval --version`, `ci-eval --help` and every command's `--help` against a bare
    interpreter, medians of 7 process starts each."""
    from ci_eval.commands import COMMANDS

    bare = _best_of([sys.executable, "-c", "pass"])
    version = _best_of([sys.executable, "-m", "ci_eval", "--version"])
    helps = {"--help": _best_of([sys.executable, "-m", "ci_eval", "--help"])}
    for name in COMMANDS:
        helps[f"{name} --help"] = _best_of([sys.executable, "-m", "ci_eval", name, "--help"])
    over = {label: (t - bare) * 1000 for label, t in helps.items()}
    return {"bare_python_s": bare, "ci_eval_version_s": version, "overhead_ms": (version - bare) * 1000,
            "help_overhead_ms": over, "worst_help": max(over, key=over.get), "goal_ms": 150}


def install() -> dict:
    """The action's cold install: a fresh venv, the pinned requirements from the package
    index, then ci-eval itself, as action.yml does it."""
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-cache-dir",
               "--disable-pip-version-check"]
        subprocess.run([*pip, "-r", str(REPO / "requirements" / "action.txt")], check=True)
        subprocess.run([*pip, "--no-deps", str(REPO)], check=True, capture_output=True)
        elapsed = time.perf_counter() - start
        site = next((venv / "lib").glob("python*/site-packages"))
        size = sum(f.stat().st_size for f in site.rglob("*") if f.is_file())
        biggest = {}
        for child in site.iterdir():
            if child.is_dir() and not child.name.endswith("-info"):
                biggest[child.name] = sum(f.stat().st_size for f in child.rglob("*") if f.is_file())
        top = sorted(biggest.items(), key=lambda kv: -kv[1])[:5]
    return {"seconds": elapsed, "site_packages_mb": size / 2**20,
            "largest_mb": {name: round(b / 2**20, 1) for name, b in top}}


if __name__ == "__main__":
    for name, fn in [("runner concurrency", runner_concurrency), ("memory", memory),
                     ("start-up", startup), ("install", install)]:
        print(name, json.dumps(fn(), indent=1))
    os._exit(0)
