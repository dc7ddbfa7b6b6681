"""How close the size check's figure is to what `ci-eval run` writes.

    python benchmarks/bench_size_check.py [--sizes 20000,100000] [--before REV]

For each size, bench_scale.py's project (an instant python retriever at depth 15, one
question in ten unanswerable; ``long`` rows: every sixth question id 200 characters long) is
run once with the size limit lifted, which gives the artefact's real size, and once with
the limit at half of it, which makes the run name its projected size ("on course for N
bytes") and stop. ``--before REV`` also asks that revision's `run` for its figure with a
limit of one byte ("could reach N bytes"), in the same run of this script, so the two
figures stand side by side as ratios of the real size.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_evaluate import _worktree  # noqa: E402
from bench_scale import ROOT, _env, make_project  # noqa: E402

_LIMITED = ("import sys; import ci_eval.inputs.loaders as loaders; loaders.MAX_ARTEFACT_BYTES = {limit}; "
            "from ci_eval.cli import main; sys.exit(main(['run', '--quiet', '--out', 'run.json']))")


def _run(folder: Path, code: Path, n: int, limit: int) -> tuple[int, str]:
    env = _env(code, BENCH_SHIFT="1", BENCH_N=str(n))
    done = subprocess.run([sys.executable, "-c", _LIMITED.format(limit=limit)], cwd=folder, env=env,
                          capture_output=True, text=True)
    return done.returncode, done.stderr


def _figure(pattern: str, err: str) -> int:
    found = re.search(pattern, err)
    if found is None:
        raise SystemExit(f"no figure in: {err.strip()}")
    return int(found.group(1).replace(",", ""))


def one_shape(n: int, long_ids: bool, before: str | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="ci-eval-size-") as tmp:
        folder = Path(tmp)
        make_project(folder, n, long_ids)
        code, err = _run(folder, ROOT, n, 1 << 40)
        if code != 0:
            raise SystemExit(err)
        real = (folder / "run.json").stat().st_size
        code, err = _run(folder, ROOT, n, real // 2)
        row = {"questions": n, "ids": "long" if long_ids else "short", "real": real,
               "projected": _figure(r"on course for ([\d,]+) bytes", err)}
        if before is not None:
            code, err = _run(folder, Path(before), n, 1)
            row["before"] = _figure(r"could reach ([\d,]+) bytes", err)
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--before", help="a revision whose figure to show beside")
    args = parser.parse_args()
    with _worktree(args.before) as before:
        print("| questions | ids | written | projected | projected / written |"
              + (" before | before / written |" if before else ""))
        print("| ---: | --- | ---: | ---: | ---: |" + (" ---: | ---: |" if before else ""))
        for n in map(int, args.sizes.split(",")):
            for long_ids in (False, True):
                row = one_shape(n, long_ids, before)
                line = (f"| {n:,} | {row['ids']} | {row['real']:,} | {row['projected']:,} | "
                        f"{row['projected'] / row['real']:.3f}x |")
                if before:
                    line += f" {row['before']:,} | {row['before'] / row['real']:.2f}x |"
                print(line, flush=True)

if __name__ == "__main__":
    main()
