"""The action's install, cold against warm: action/install.sh itself, as action.yml runs it.

    python benchmarks/bench_install.py [--repeat 3]

Cold: no cached environment, so a fresh venv and the pinned requirements from the package
index (pip's own cache off, as on a fresh runner), then ci-eval. Warm: what actions/cache
does on a hit, restoring the venv saved by the cold run (a zstd tar, the format actions/cache
writes), then install.sh with the cache hit, which finds everything installed. Needs the
package index and `zstd`. Prints JSON; docs/benchmarks.md records a run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "action" / "install.sh"


def _install(tmp: Path, venv: Path, cache_hit: bool) -> float:
    out = tmp / "github_output"
    out.write_text("")
    env = {**os.environ, "GITHUB_OUTPUT": str(out), "CI_EVAL_SOURCE": str(REPO), "CI_EVAL_PYTHON": sys.executable,
           "CI_EVAL_VENV": str(venv), "CI_EVAL_CACHE_HIT": "true" if cache_hit else "", "PIP_NO_CACHE_DIR": "1"}
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    subprocess.run(["bash", str(SCRIPT), "install"], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def once() -> dict:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        venv = tmp / "ci-eval-venv"
        cold = _install(tmp, venv, cache_hit=False)
        archive = tmp / "cache.tzst"
        save = _timed(["tar", "--zstd", "-cf", str(archive), venv.name], tmp)
        shutil.rmtree(venv)
        restore = _timed(["tar", "--zstd", "-xf", str(archive)], tmp)
        warm = _install(tmp, venv, cache_hit=True)
        return {"cold_s": cold, "restore_s": restore, "warm_install_s": warm, "warm_total_s": restore + warm,
                "save_s": save, "archive_mb": archive.stat().st_size / 2**20}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    runs = [once() for _ in range(args.repeat)]
    medians = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print(json.dumps({"runs": runs, "median": medians}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
