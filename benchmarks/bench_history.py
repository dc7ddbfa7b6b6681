"""`ci-eval history` over a branch's runs: wall time and peak memory, each a whole process.

    python benchmarks/bench_history.py                        # 30 runs of 100,000 questions
    python benchmarks/bench_history.py --runs 30 --scale 2000,20000
    python benchmarks/bench_history.py --runs 1,30 --scale 20000   # the scaling basis
    python benchmarks/bench_history.py --runs 1,30 --before REV --keep DIR  # beside REV, the runs kept

Each artefact is written by the writer's own pieces (tests/support/v2_files.py) with a
15-deep ranking per question, most questions steady, 5 % breaking at run 17 and 5 %
flapping every third run, so the history has something to find. Generating them is not
timed. Each measured command is `ci-eval history FOLDER --format F --quiet` in a fresh
wrapper process that reports the child's ru_maxrss, so no earlier peak is counted; the
artefacts' total bytes are printed beside it: the peak stays far below them because the
runs are read one at a time. ``--before REV`` runs the same command with ci-eval at that git
revision (a temporary worktree) on the same folder, one after the other, and says whether
its output is byte for byte this tree's; ``--keep DIR`` writes the runs there (and reuses
them when DIR already holds them) instead of a temporary folder.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))
sys.path.insert(0, str(REPO / "benchmarks"))

_MEASURE = textwrap.dedent(
    """
    import resource, subprocess, sys, time
    t = time.perf_counter()
    with open(sys.argv[1], "wb") as out:
        done = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    if done.returncode:
        sys.exit(done.stderr.decode())
    print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    """
)


def _fast_questions():
    """factories.question, its result kept per (rank, tags): a row's facts depend on its
    gold rank alone here, so 100,000 questions cost 16 derivations, not 100,000."""
    import factories

    derive, kept = factories.question, {}

    def question(s, k, metrics):
        key = (s["ranking"].index("g") if "g" in s["ranking"] else None, tuple(s.get("tags", ())))
        if key not in kept:
            kept[key] = derive({**s, "id": "template"}, k, metrics)
        return {**kept[key], "id": s["id"], "question": f"What about {s['id']}?"}

    factories.question = question


def write_branch(folder: Path, runs: int, questions: int) -> int:
    """``runs`` artefacts of ``questions`` questions; their total bytes."""
    from factories import ranked_with_gold_at, spec
    from v2_files import write_v2

    _fast_questions()
    kinds = ["steady"] * 18 + ["breaks", "flaps"]
    total = 0
    for r in range(runs):
        specs = []
        for q in range(questions):
            kind, base = kinds[q % 20], 1 + (q * 7) % 4
            rank = None if (kind == "breaks" and r >= 16) or (kind == "flaps" and r % 3 == 1) else base
            specs.append(spec(f"q-{q:06d}", gold=["g"], ranking=ranked_with_gold_at(rank), tags=[f"t{q % 8}"]))
        path = folder / f"run-{r:02d}.json"
        write_v2(path, specs, sha=f"{r:040x}", created_at=f"2026-11-{1 + r // 24:02d}T{r % 24:02d}:00:00Z")
        total += path.stat().st_size
    return total


def measure(folder: Path, fmt: str, tree: Path = REPO) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KB) and the sha256 of stdout of one history command run by
    the ci-eval in ``tree``."""
    with tempfile.NamedTemporaryFile(prefix="bench-history-out-") as printed:
        out = subprocess.run([sys.executable, "-c", _MEASURE, printed.name, sys.executable, "-m", "ci_eval",
                              "history", str(folder), "--format", fmt, "--quiet"], capture_output=True, text=True,
                             cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
        if out.returncode:
            raise SystemExit(out.stderr)
        digest = hashlib.sha256(Path(printed.name).read_bytes()).hexdigest()
    wall, peak_kb = out.stdout.split()
    return float(wall), int(peak_kb), digest


@contextlib.contextmanager
def _folder(keep: str | None, runs: int, questions: int):
    """Where the runs are: a temporary folder, or ``keep``'s subfolder (made once)."""
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
            yield Path(tmp), write_branch(Path(tmp), runs, questions)
        return
    folder = Path(keep) / f"{runs}x{questions}"
    if not folder.is_dir():
        folder.mkdir(parents=True)
        write_branch(folder, runs, questions)
    yield folder, sum(p.stat().st_size for p in folder.glob("*.json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default="30", help="comma-separated run counts (default 30)")
    parser.add_argument("--scale", default="100000", help="comma-separated question counts (default 100000)")
    parser.add_argument("--formats", default="markdown,csv", help="comma-separated --format values")
    parser.add_argument("--before", metavar="REV", help="also run ci-eval at this git revision on the same runs")
    parser.add_argument("--keep", metavar="DIR", help="write the runs under DIR and reuse them from there")
    args = parser.parse_args()
    from bench_evaluate import _worktree

    results = []
    with _worktree(args.before) as before:
        trees = [("now", REPO)] + ([(f"before ({args.before})", Path(before))] if before else [])
        for questions in map(int, args.scale.split(",")):
            for runs in map(int, args.runs.split(",")):
                with _folder(args.keep, runs, questions) as (folder, total):
                    for fmt in args.formats.split(","):
                        digests = set()
                        for name, tree in trees:
                            wall, peak, digest = measure(folder, fmt, tree)
                            digests.add(digest)
                            row = {"tree": name, "runs": runs, "questions": questions, "format": fmt,
                                   "artefact_mb": total / 1e6, "wall_s": round(wall, 1),
                                   "peak_mb": round(peak / 1024, 1), "same_output": len(digests) == 1}
                            results.append(row)
                            print(json.dumps(row), flush=True)
    print("| ci-eval | runs | questions | format | artefacts (MB) | wall (s) | peak RSS (MB) | output as now's |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        print(f"| {r['tree']} | {r['runs']} | {r['questions']:,} | {r['format']} | {r['artefact_mb']:,.0f} | "
              f"{r['wall_s']} | {r['peak_mb']:,.0f} | {'same bytes' if r['same_output'] else 'DIFFERS'} |")


if __name__ == "__main__":
    main()
