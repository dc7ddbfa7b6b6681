"""All of ci-eval's benchmarks in one run, each figure beside the peers' from the same run.

    python benchmarks/run.py            # everything (a few minutes; needs the `peers` extra)
    python benchmarks/run.py --quick    # smaller sizes, one repeat, no install
    python benchmarks/run.py --json results.json

The seven figures: (1) the metric engine on parsed rankings, (2) `ci-eval evaluate` from
files, as whole processes, (3) runner concurrency and memory, (4) start-up, (5) the paired
statistics, (6) the PR job's own overhead against a loopback GitHub, (7) the action's cold
install. Timings are wall-clock on a shared machine: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def _machine() -> dict:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    import numpy

    return {"python": platform.python_version(), "numpy": numpy.__version__, "cpus": os.cpu_count(),
            "machine": platform.machine(), "load_1min": load}


def _line(label: str, ours: str, peers: str, verdict: str) -> None:
    print(f"{label:<44} {ours:<26} {peers:<46} {verdict}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Run every ci-eval benchmark.")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats, no install")
    parser.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    args = parser.parse_args(argv)

    import bench_engine
    import bench_pipeline
    import bench_stats

    results: dict = {"machine": _machine(), "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    print(f"machine: {results['machine']}")
    print()
    _line("figure", "ci-eval", "peers (same run)", "goal")

    sizes = ((7000, 200),) if args.quick else ((7000, 200), (7000, 1000))
    repeat = 3 if args.quick else 5
    eng = bench_engine.engine(7000, 200 if args.quick else 1000, repeat)
    whole = bench_engine.whole_process(sizes, repeat)
    results["engine"], results["evaluate"] = eng, whole
    secs = eng["seconds"]
    _line(f"1. metric engine, 7,000 x {eng['depth']:,} parsed", f"{secs['ci-eval compute() from lists']:.2f} s",
          f"pytrec_eval {secs['pytrec_eval evaluate()']:.2f} s "
          f"({eng['ci-eval compute() / pytrec_eval']:.2f}x), ranx warm {secs['ranx evaluate() warm']:.2f} s",
          "faster than pytrec_eval")
    for size, fig in whole.items():
        s_ = fig["seconds"]
        _line(f"2. ci-eval evaluate, files {size}", f"{s_['ci-eval']:.2f} s",
              f"pytrec_eval {s_['pytrec_eval']:.2f} s ({fig['ci-eval / pytrec_eval']:.2f}x), "
              f"ranx {s_['ranx (numba cache warm)']:.2f} s", "<= 0.50x pytrec_eval")

    conc = bench_pipeline.runner_concurrency()
    results["concurrency"] = conc
    _line("3. 1,000 questions x 50 ms at concurrency 16", f"{conc['seconds']:.2f} s",
          f"ideal {conc['ideal_seconds']:.3f} s ({conc['ratio_to_ideal']:.2f}x ideal)", "<= 1.25x ideal")
    mem = bench_pipeline.memory((10_000,) if args.quick else (10_000, 100_000))
    results["memory"] = mem
    for n, fig in mem.items():
        _line(f"3. peak memory, {int(n):,} questions", f"{fig['peak_mb']:.0f} MB",
              f"artefact {fig['artefact_mb']:.0f} MB", "bounded, linear")

    start = bench_pipeline.startup()
    results["startup"] = start
    _line("4. ci-eval --version", f"+{start['overhead_ms']:.0f} ms",
          f"bare python {start['bare_python_s'] * 1000:.0f} ms", "<= +150 ms")
    worst = start["worst_help"]
    _line("4. slowest --help", f"+{start['help_overhead_ms'][worst]:.0f} ms ({worst})",
          f"bare python {start['bare_python_s'] * 1000:.0f} ms", "<= +150 ms")

    stats = bench_stats.stats_speed()
    results["stats"] = stats
    _line("5. paired tests 5,000 q x 6 metrics", f"{stats['ours_s']:.2f} s",
          f"sign-flip ({', '.join(stats['methods'])})",
          "< 0.5 s")

    try:
        import bench_action
    except ImportError:
        bench_action = None
    if bench_action is not None:
        act = bench_action.action_overhead()
        results["action"] = act
        _line("6. ci-eval action, 1,000 questions", f"{act['median_s']:.2f} s",
              "start to comment posted (loopback GitHub)", "< 2 s")

    if not args.quick:
        inst = bench_pipeline.install()
        results["install"] = inst
        _line("7. action cold install", f"{inst['seconds']:.1f} s",
              f"{inst['site_packages_mb']:.0f} MB installed; largest {inst['largest_mb']}", "as small as deps allow")

    print()
    print(bench_engine.report({"engine": eng, "whole_process": whole}))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
