"""`compare` and `run` with this tree against another revision's, alternated: what a set of
changes costs or buys as a whole.

    python benchmarks/bench_revisions.py [--before 014dc10] [--questions 100000] [--repeat 5]

The other revision's ``ci_eval`` is exported with ``git archive``; both trees run the same
project (benchmarks/user_shaped.py) and the same pair of artefacts, made by this tree's
``ci-eval run``. The two trees take turns, ``--repeat`` rounds; printed: each one's walls, the
ratio of the medians this / before, the median of each round's ratio, and the CPU ratio
(medians of the process and its children). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import user_shaped  # noqa: E402
from check_identical import _export  # noqa: E402

COMMANDS = {"compare": ["compare", "base.json", "head.json", "--json-out", "report.json", "--summary-out", "summary.md"],
            "run": ["run", "--out", "timed.json", "--quiet"]}


def _timed(argv: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr[-1500:]!r}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="014dc10")
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="ci-eval-revisions-") as tmp:
        before, project = Path(tmp) / args.before, Path(tmp) / "project"
        before.mkdir()
        _export(args.before, before)
        # Both trees compiled ahead: where PYTHONDONTWRITEBYTECODE is set, the exported tree
        # would otherwise compile every module it imports in every process, and this one not.
        compileall.compile_dir(before / "ci_eval", quiet=1)
        compileall.compile_dir(ROOT / "ci_eval", quiet=1)
        project.mkdir()
        user_shaped.write_project(project, args.questions)
        for side in ("base", "head"):
            user_shaped.run_artefact(project, side, project / f"{side}.json", ROOT, sys.executable)
        trees = {args.before: before, "this tree": ROOT}
        for command, words in COMMANDS.items():
            walls = {name: [] for name in trees}
            cpus = {name: [] for name in trees}
            for _ in range(args.repeat):
                for name, tree in trees.items():
                    env = user_shaped.environment(project, tree, "head")
                    wall, cpu = _timed([sys.executable, "-m", "ci_eval", *words], project, env)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
            now, then = walls["this tree"], walls[args.before]
            print(f"{command}: walls {args.before} {[round(w, 2) for w in then]}, this tree "
                  f"{[round(w, 2) for w in now]}; this / before: medians "
                  f"{statistics.median(now) / statistics.median(then):.2f}x, by round "
                  f"{statistics.median(a / b for a, b in zip(now, then)):.2f}x, CPU "
                  f"{statistics.median(cpus['this tree']) / statistics.median(cpus[args.before]):.2f}x", flush=True)
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
