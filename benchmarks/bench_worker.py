"""The cost of running a python retriever in a worker process (retrieval/worker.py) on the
fast path: a retriever that answers at once, `ci-eval run` end to end, against the same run
with the retriever called in ci-eval's own process (what ci-eval did before the worker).

A and B alternate in one run, each a whole `ci-eval run` process, so a loaded machine slows
both alike; read the ratio of the medians, not the seconds. CPU seconds (ci-eval's process
and its worker together) are reported beside the wall time: on a machine whose other work
takes the second core, the worker's CPU is what the run waits for.

    python benchmarks/bench_worker.py --questions 20000 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RETRIEVER = """
RANKED = [(f"c{j}", 1.0 / (j + 1)) for j in range(15)]


def instant(question, depth):
    return RANKED
"""
# The in-process run: the runner the python type had before the worker, chosen by hand.
IN_PROCESS = """
import sys
from ci_eval.retrieval import pipeline, python_runner, worker
pipeline.runner_for = lambda kind: python_runner.runner
worker.prestart = lambda config: None
from ci_eval.cli import main
sys.exit(main(sys.argv[1:]))
"""
WORKER = "import sys\nfrom ci_eval.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def project(root: Path, questions: int) -> None:
    gold = [{"id": f"q{i}", "question": f"question {i}", "gold": [f"c{i % 20}"]} for i in range(questions)]
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": gold}))
    (root / "retriever.py").write_text(RETRIEVER)
    (root / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 5\n[retriever]\ntype = "python"\n'
                                       'target = "retriever:instant"\n')


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def one_run(root: Path, script: str) -> tuple[float, float]:
    """Seconds of wall time and of CPU (every process of the run: ci-eval and its worker)."""
    cpu = _cpu()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script, "run", "--out", "run.json", "--quiet"], cwd=root,
                          capture_output=True, text=True, check=False, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    took = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    return took, _cpu() - cpu


def bench(questions: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project(root, questions)
        one_run(root, WORKER)  # warm the file cache and the bytecode
        a, b = [], []
        for _ in range(rounds):
            a.append(one_run(root, IN_PROCESS))
            b.append(one_run(root, WORKER))
    ma, mb = (statistics.median(t for t, _ in runs) for runs in (a, b))
    ca, cb = (statistics.median(c for _, c in runs) for runs in (a, b))
    return {"questions": questions, "rounds": rounds, "in_process_s": [t for t, _ in a], "worker_s": [t for t, _ in b],
            "median_in_process_s": ma, "median_worker_s": mb, "ratio": mb / ma,
            "median_in_process_cpu_s": ca, "median_worker_cpu_s": cb, "cpu_ratio": cb / ca, "goal_ratio": 1.10}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(json.dumps(bench(args.questions, args.rounds), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
