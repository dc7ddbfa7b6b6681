"""Speed of ci-eval's metric engine and of `ci-eval evaluate`, against pytrec_eval and ranx.

Two figures, each a function returning a dict (so CI can store or compare them):

* ``engine()``: the metric engine alone on parsed rankings (7,000 queries x 1,000 results):
  ci-eval's grade table + kernels, pytrec_eval's ``RelevanceEvaluator.evaluate`` and ranx's
  ``evaluate`` (warm: JIT already compiled in this process; cold: a fresh subprocess, so
  numba's compilation is paid). Per-query values are checked to agree.
* ``whole_process()``: whole processes on generated TREC files (7,000 x 200 and
  7,000 x 1,000, graded qrels): ``ci-eval evaluate``, pytrec_eval (parse + evaluate) and
  ranx (``Qrels.from_file``/``Run.from_file`` + evaluate), each in its own subprocess.

Run ``python benchmarks/bench_engine.py [--quick]``. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TREC_MEASURES = {"P_10", "recall_100", "ndcg_cut_10", "recip_rank", "map", "success_10"}
OURS = {"P_10": "precision@10", "recall_100": "recall@100", "ndcg_cut_10": "ndcg@10",
        "recip_rank": "mrr", "map": "map", "success_10": "hit@10"}
RANX = {"P_10": "precision@10", "recall_100": "recall@100", "ndcg_cut_10": "ndcg_burges@10",
        "recip_rank": "mrr", "map": "map", "success_10": "hit_rate@10"}


def generate(folder: Path, queries: int, depth: int, seed: int = 7) -> tuple[Path, Path]:
    """A run in rank order (ties left in arbitrary id order) and graded qrels."""
    rng = np.random.default_rng(seed)
    qrels, run = folder / f"qrels_{queries}x{depth}", folder / f"run_{queries}x{depth}"
    with open(qrels, "w") as q, open(run, "w") as r:
        for n in range(queries):
            qid = f"q{n:05d}"
            docs = rng.choice(500_000, size=depth + 10, replace=False)
            # float32-exact scores (multiples of 1/1024), so pytrec_eval sees the same ties.
            scores = np.sort(rng.integers(0, 40_000, depth) / 1024.0)[::-1]
            r.write("".join(f"{qid} Q0 doc{d:07d} {i + 1} {float(s)!r} bench\n"
                            for i, (d, s) in enumerate(zip(docs[:depth], scores))))
            judged = list(rng.choice(docs[: min(depth, 200)], size=10, replace=False))
            judged += list(docs[depth:])
            q.write("".join(f"{qid} 0 doc{d:07d} {int(rng.integers(0, 4))}\n" for d in judged))
    return qrels, run


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


PYTREC_SCRIPT = """
import sys, pytrec_eval
with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)
pytrec_eval.RelevanceEvaluator(qrels, {'P', 'recall', 'ndcg_cut', 'recip_rank', 'map',
                                       'success'}).evaluate(run)
"""
RANX_SCRIPT = """
import sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind='trec')
run = Run.from_file(sys.argv[2], kind='trec')
evaluate(qrels, run, %r)
"""


def whole_process(sizes=((7000, 200), (7000, 1000)), repeat: int = 2) -> dict:
    """Best-of-``repeat`` wall time of each tool as a fresh process, and the ratios."""
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for queries, depth in sizes:
            qrels, run = generate(Path(tmp), queries, depth)
            commands = {
                "ci-eval": [sys.executable, "-m", "ci_eval", "evaluate", "-m", "all_trec",
                            str(qrels), str(run)],
                "pytrec_eval": [sys.executable, "-c", PYTREC_SCRIPT, str(qrels), str(run)],
                "ranx": [sys.executable, "-c", RANX_SCRIPT % list(RANX.values()), str(qrels),
                         str(run)],
            }
            times = {name: min(_timed(cmd) for _ in range(repeat)) for name, cmd in commands.items()}
            out[f"{queries}x{depth}"] = {
                "seconds": times,
                "ci-eval / pytrec_eval": times["ci-eval"] / times["pytrec_eval"],
                "ci-eval / ranx": times["ci-eval"] / times["ranx"],
            }
    return out


def _ranx_cold(qrels: Path, run: Path) -> float:
    script = (
        "import sys, time\nfrom ranx import Qrels, Run, evaluate\n"
        "q = Qrels.from_file(sys.argv[1], kind='trec'); r = Run.from_file(sys.argv[2], kind='trec')\n"
        f"t = time.perf_counter(); evaluate(q, r, {list(RANX.values())!r})\n"
        "print(time.perf_counter() - t)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(qrels), str(run)], check=True,
                          capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def engine(queries: int = 7000, depth: int = 1000) -> dict:
    """The metric engine alone, from parsed rankings; agreement checked on every query."""
    import pytrec_eval
    from ranx import Qrels, Run, evaluate

    from ci_eval import trec
    from ci_eval.core.metrics import compute_table

    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = generate(Path(tmp), queries, depth)
        parsed_qrels, parsed_run = trec.read_qrels(str(qrels_path)), trec.read_run(str(run_path))
        qrels_dict = parsed_qrels.as_dict()
        run_dict = parsed_run.as_pairs()
        run_nested = {q: dict(pairs) for q, pairs in run_dict.items()}

        start = time.perf_counter()
        judged = trec.judge(parsed_qrels, parsed_run)
        values = compute_table(list(OURS.values()), judged.table)
        ours = time.perf_counter() - start

        start = time.perf_counter()
        reference = pytrec_eval.RelevanceEvaluator(
            qrels_dict, {"P", "recall", "ndcg_cut", "recip_rank", "map", "success"}
        ).evaluate(run_nested)
        pytrec = time.perf_counter() - start

        ranx_qrels, ranx_run = Qrels(qrels_dict), Run(run_nested)
        evaluate(ranx_qrels, ranx_run, list(RANX.values()))  # compile
        start = time.perf_counter()
        evaluate(ranx_qrels, ranx_run, list(RANX.values()))
        ranx_warm = time.perf_counter() - start
        ranx_cold = _ranx_cold(qrels_path, run_path)

        worst = 0.0
        for row, qid in enumerate(judged.qids):
            for trec_name, ours_name in OURS.items():
                worst = max(worst, abs(values[ours_name][row] - reference[qid][trec_name]))
    return {
        "queries": queries, "depth": depth,
        "seconds": {"ci-eval (table + kernels)": ours, "pytrec_eval evaluate": pytrec,
                    "ranx warm": ranx_warm, "ranx cold (JIT)": ranx_cold},
        "ci-eval / pytrec_eval": ours / pytrec,
        "ci-eval / ranx warm": ours / ranx_warm,
        "max abs difference vs pytrec_eval": worst,
        "agrees to 1e-9": worst <= 1e-9,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="7,000 x 200 only, one repeat")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    depth = 200 if args.quick else 1000
    figures = {"engine": engine(7000, depth)}
    sizes = ((7000, 200),) if args.quick else ((7000, 200), (7000, 1000))
    figures["whole_process"] = whole_process(sizes, repeat=1 if args.quick else 2)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
