"""The bounds on untrusted input (docs/reliability.md, "Bounds on the work"), each command in
its own process: wall time, CPU time, peak memory and what it said.

- `gold mine` on a crafted log whose every pair of questions sits just under the
  near-duplicate threshold (ten shared words, five of each line's own: similarity 0.487);
- `history` over a folder holding one sparse file of one line, past the artefact's size limit;
- `compare` of two artefacts whose questions carry 50 tags of their own each.

Runnable alone: ``python benchmarks/bench_bounds.py [--lines 8000] [--history-mb 1024]
[--tagged 600]``. To measure another checkout, put it first on PYTHONPATH: the commands run
as ``python -m ci_eval`` with this process's environment.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_MEASURE = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
            "print(p.returncode, u.ru_utime + u.ru_stime, u.ru_maxrss); "
            "lines = (p.stdout + p.stderr).splitlines(); "
            "print(next((x for x in lines if 'compared' in x or 'error' in x), lines[-1] if lines else '')[:160])")
SHARED_WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"


def measured(name: str, args: list[str], cwd: Path) -> None:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "ci_eval", *args], cwd=cwd,
                         capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    head, said = (out.stdout.splitlines() + [""])[:2]
    rc, cpu, rss = head.split()
    print(f"{name}: exit {rc}; wall {wall:.1f} s, CPU {float(cpu):.1f} s, peak RSS {int(rss) / 1024:.0f} MiB")
    print(f"  said: {said}")


def crafted_log(path: Path, lines: int) -> None:
    path.write_text("".join(f"{SHARED_WORDS} {' '.join(f'w{i}x{j}' for j in range(5))}\n" for i in range(lines)))


def tagged_artefact(path: Path, questions: int, sha: str) -> None:
    sys.path.insert(0, str(HERE.parent / "tests" / "support"))
    from factories import artefact, spec

    specs = [spec(f"q{i}", ["g"], ["g" if i % 2 else "x", "y"], tags=[f"q{i}-t{j}" for j in range(50)])
             for i in range(questions)]
    path.write_text(json.dumps(artefact(specs, sha=sha)), encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=8000, help="lines of the crafted query log")
    ap.add_argument("--history-mb", type=int, default=1024, help="size of the one-line file in the history folder")
    ap.add_argument("--tagged", type=int, default=600, help="questions of 50 tags of their own each")
    ap.add_argument("--only", choices=("mine", "history", "tags"), help="measure one of the three")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.only in (None, "mine"):
            crafted_log(folder / "crafted.log", args.lines)
            measured(f"gold mine, crafted log of {args.lines:,} lines", [
                "gold", "mine", "crafted.log", "--no-gold", "--out", "mined.jsonl"], folder)
        if args.only in (None, "history"):
            runs = folder / "runs"
            runs.mkdir()
            tagged_artefact(runs / "a.json", 1, "a" * 40)
            with open(runs / "big.json", "wb") as fh:
                fh.truncate(args.history_mb * 1024 * 1024)
            measured(f"history, a one-line file of {args.history_mb:,} MiB", ["history", "runs"], folder)
        if args.only in (None, "tags"):
            tagged_artefact(folder / "base.json", args.tagged, "a" * 40)
            tagged_artefact(folder / "head.json", args.tagged, "b" * 40)
            measured(f"compare, {args.tagged:,} questions of 50 tags of their own",
                     ["compare", "base.json", "head.json"], folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
