"""The retrieval cache: an uncached run, a first run with an empty cache and a run answered
wholly from it, each `ci-eval run` a whole process (wall and CPU seconds, its own peak RSS).

    python benchmarks/bench_cache.py                          # 10,000 and 100,000 questions
    python benchmarks/bench_cache.py --scale 10000 --repeat 3 --before REV

The retriever answers instantly (15 results), so the figures are the cache's own cost, not
a retriever's. The uncached and first cached runs alternate ``--repeat`` times in one
process (a shared machine's load falls on both alike): their ratio is the figure to read.
``--before REV`` measures the same runs at that revision (from a temporary git worktree).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_evaluate import _worktree  # noqa: E402
from bench_shards import REPO, _measure, _project  # noqa: E402


def _runs(root: Path, repeat: int, code: Path) -> dict:
    cache = root / "cache"
    uncached, first, cached = [], [], []
    for _ in range(repeat):
        uncached.append(_measure(root, "run", "--quiet", "--out", "u.json", code=code))
        shutil.rmtree(cache, ignore_errors=True)
        first.append(_measure(root, "run", "--quiet", "--cache", str(cache), "--out", "f.json", code=code))
        cached.append(_measure(root, "run", "--quiet", "--cache", str(cache), "--out", "c.json", code=code))
    hits = json.loads((root / "c.json").read_text()).get("cache")

    def median(runs, key):
        return statistics.median(r[key] for r in runs)

    return {
        "uncached_s": median(uncached, "seconds"), "first_cached_s": median(first, "seconds"),
        "cached_s": median(cached, "seconds"),
        "first_over_uncached": statistics.median(f["seconds"] / u["seconds"] for f, u in zip(first, uncached)),
        "cpu_first_over_uncached": statistics.median(f["cpu_s"] / u["cpu_s"] for f, u in zip(first, uncached)),
        "peak_mb": {"uncached": median(uncached, "peak_mb"), "first_cached": median(first, "peak_mb"),
                    "cached": median(cached, "peak_mb")},
        "cache_record": hits,
        "store_mb": round(sum(p.stat().st_size for p in cache.rglob("*") if p.is_file()) / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--before", metavar="REV")
    args = parser.parse_args()
    out: dict = {}
    for n in map(int, args.scale.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            root = _project(Path(tmp) / "p", n, "instant")
            out[f"{n}"] = {"now": _runs(root, args.repeat, REPO)}
            if args.before:
                with _worktree(args.before) as before:
                    out[f"{n}"]["before"] = _runs(root, args.repeat, before)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
