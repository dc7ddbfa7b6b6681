"""Speed of ci-eval's metric engine and of `ci-eval evaluate`, side by side with
pytrec_eval and ranx, agreement checked while timing.

Two figures, each a function returning a dict (so CI can store or compare them):

* ``engine()``: the metric engine alone on parsed data (7,000 queries x 1,000 results,
  graded qrels, six measures): ci-eval's ``compute(metrics, rankings, judgments)`` from
  Python lists and dicts (rankings already in trec_eval's order, as the core API takes
  them) and ci-eval's TREC path (``judge`` on parsed files, which orders the ties, plus
  the kernels); pytrec_eval's ``RelevanceEvaluator(...).evaluate(run)``; ranx's
  ``evaluate`` warm (JIT compiled earlier in the process) and cold (a fresh process with
  an empty numba cache, as on a fresh CI machine). Per-query values are compared with
  pytrec_eval's.
* ``whole_process()``: files to numbers, each tool a fresh process, on generated TREC
  files (7,000 x 200 and 7,000 x 1,000): ``ci-eval evaluate -m all_trec``, pytrec_eval
  (``parse_qrel`` + ``parse_run`` + evaluate) and ranx (``from_file`` + evaluate, numba
  cache warm and empty), all asked for the same measures (P, recall and ndcg_cut at
  trec_eval's cutoffs, success at 1, 5, 10, recip_rank, map). The means each prints are
  compared with pytrec_eval's.

Times are medians of ``--repeat`` runs (ranx, ten to a hundred times slower: two runs
warm, one cold), the tools interleaved so that a busy machine slows them alike; the
load average is printed with them. The data have tied scores
(multiples of 1/1024, exact in pytrec_eval's float32 too): ranx breaks ties its own way,
trec_eval by document id, so ranx's values differ on tied queries; ci-eval must agree
with pytrec_eval to 1e-9 per query.

Run ``python benchmarks/bench_engine.py [--quick] [--repeat N] [--json FILE]``. Nothing
here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # measure this checkout, in this process as in the subprocesses
    sys.path.insert(0, str(ROOT))

# Engine measures: trec_eval name -> ci-eval name -> ranx name.
OURS = {"P_10": "precision@10", "recall_100": "recall@100", "ndcg_cut_10": "ndcg@10",
        "recip_rank": "mrr", "map": "map", "success_10": "hit@10"}
RANX = {"P_10": "precision@10", "recall_100": "recall@100", "ndcg_cut_10": "ndcg@10",
        "recip_rank": "mrr", "map": "map", "success_10": "hit_rate@10"}
PYTREC_MEASURES = {"P", "recall", "ndcg_cut", "recip_rank", "map", "success"}

# Whole-process measures: what `-m all_trec` prints beyond the counts, for every tool.
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
ALL_TREC = ([f"P_{k}" for k in CUTS] + [f"recall_{k}" for k in CUTS]
            + [f"ndcg_cut_{k}" for k in CUTS] + ["success_1", "success_5", "success_10",
                                                  "recip_rank", "map"])


def _ranx_name(trec: str) -> str:
    family, _, k = trec.rpartition("_") if trec[-1].isdigit() else (trec, "", "")
    base = {"P": "precision", "recall": "recall", "ndcg_cut": "ndcg", "success": "hit_rate",
            "recip_rank": "mrr", "map": "map"}[family]
    return f"{base}@{k}" if k else base


def generate(folder: Path, queries: int, depth: int, seed: int = 7,
             levels: int = 40_000) -> tuple[Path, Path]:
    """A run in rank order (ties left in arbitrary id order) and graded qrels. ``levels``
    is how many distinct scores a query draws from: fewer levels, more ties."""
    rng = np.random.default_rng(seed)
    qrels, run = folder / f"qrels_{queries}x{depth}_{levels}", folder / f"run_{queries}x{depth}_{levels}"
    with open(qrels, "w") as q, open(run, "w") as r:
        for n in range(queries):
            qid = f"q{n:05d}"
            docs = rng.choice(500_000, size=depth + 10, replace=False)
            # float32-exact scores (multiples of 1/1024), so pytrec_eval sees the same ties.
            scores = np.sort(rng.integers(0, levels, depth) / 1024.0)[::-1]
            r.write("".join(f"{qid} Q0 doc{d:07d} {i + 1} {float(s)!r} bench\n"
                            for i, (d, s) in enumerate(zip(docs[:depth], scores))))
            judged = list(rng.choice(docs[: min(depth, 200)], size=10, replace=False))
            judged += list(docs[depth:])
            q.write("".join(f"{qid} 0 doc{d:07d} {int(rng.integers(0, 4))}\n" for d in judged))
    return qrels, run


def _median(times: list[float]) -> float:
    return statistics.median(times)


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on every platform
        return "n/a"


def _env(fresh_numba_cache: str | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if fresh_numba_cache:
        env["NUMBA_CACHE_DIR"] = fresh_numba_cache
    return env


# --------------------------------------------------------------------------- engine

RANX_COLD = """
import json, sys, time
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
start = time.perf_counter()
evaluate(qrels, run, json.loads(sys.argv[3]))
print(time.perf_counter() - start)
"""


def engine(queries: int = 7000, depth: int = 1000, repeat: int = 5) -> dict:
    """The metric engine alone, from parsed data; agreement checked on every query."""
    import pytrec_eval
    from ranx import Qrels, Run, evaluate

    from ci_eval.core.measure.metrics import compute, compute_table
    from ci_eval.core.measure.trec_order import order
    from ci_eval.trec import parse as trec
    from ci_eval.trec.judge import judge

    with tempfile.TemporaryDirectory() as tmp:
        qrels_path, run_path = generate(Path(tmp), queries, depth)
        parsed_qrels, parsed_run = trec.read_qrels(str(qrels_path)), trec.read_run(str(run_path))
        qrels_dict = parsed_qrels.as_dict()
        run_pairs = parsed_run.as_pairs()
        qids = sorted(q for q in run_pairs if q in qrels_dict)
        rankings = [list(order(run_pairs[q]).ids) for q in qids]
        judgments = [qrels_dict[q] for q in qids]
        run_nested = {q: dict(pairs) for q, pairs in run_pairs.items()}
        metrics = list(OURS.values())

        def ours_lists():
            return compute(metrics, rankings, judgments)

        def ours_trec():
            return compute_table(metrics, judge(parsed_qrels, parsed_run).table)

        def pytrec():
            return pytrec_eval.RelevanceEvaluator(qrels_dict, PYTREC_MEASURES).evaluate(run_nested)

        ranx_qrels, ranx_run = Qrels(qrels_dict), Run(run_nested)

        def ranx():
            return evaluate(ranx_qrels, ranx_run, list(RANX.values()), return_mean=False)

        ranx()  # compile (or load from numba's cache)
        runs: dict[str, list[float]] = {"lists": [], "trec": [], "pytrec": [], "ranx": []}
        results = {}
        for _ in range(repeat):  # interleaved: a busy machine slows every tool alike
            for name, fn in (("lists", ours_lists), ("trec", ours_trec), ("pytrec", pytrec),
                             ("ranx", ranx)):
                start = time.perf_counter()
                results[name] = fn()
                runs[name].append(time.perf_counter() - start)
        with tempfile.TemporaryDirectory() as cache:
            done = subprocess.run(
                [sys.executable, "-c", RANX_COLD, str(qrels_path), str(run_path),
                 json.dumps(list(RANX.values()))],
                check=True, capture_output=True, text=True, env=_env(cache))
        ranx_cold = float(done.stdout.split()[-1])

    reference = results["pytrec"]
    judged_qids = judge(parsed_qrels, parsed_run).qids
    agreement = {}
    for label, values, row_qids in (("ci-eval compute()", results["lists"], qids),
                                    ("ci-eval judge() + kernels", results["trec"], judged_qids)):
        worst = max(abs(float(values[OURS[t]][row]) - reference[q][t])
                    for row, q in enumerate(row_qids) for t in OURS)
        agreement[label] = worst
    ranx_order = list(ranx_run.keys())
    ranx_values = results["ranx"]
    ranx_diff = [abs(float(ranx_values[RANX[t]][row]) - reference[q][t])
                 for row, q in enumerate(ranx_order) for t in RANX]
    seconds = {
        "ci-eval compute() from lists": _median(runs["lists"]),
        "ci-eval judge() + kernels (TREC path)": _median(runs["trec"]),
        "pytrec_eval evaluate()": _median(runs["pytrec"]),
        "ranx evaluate() warm": _median(runs["ranx"]),
        "ranx evaluate() cold (fresh numba cache)": ranx_cold,
    }
    return {
        "queries": queries, "depth": depth, "repeat": repeat, "load": load(),
        "seconds": seconds,
        "ci-eval compute() / pytrec_eval": seconds["ci-eval compute() from lists"]
        / seconds["pytrec_eval evaluate()"],
        "ci-eval compute() / ranx warm": seconds["ci-eval compute() from lists"]
        / seconds["ranx evaluate() warm"],
        "ci-eval TREC path / pytrec_eval": seconds["ci-eval judge() + kernels (TREC path)"]
        / seconds["pytrec_eval evaluate()"],
        "max |difference| vs pytrec_eval": agreement,
        "agrees to 1e-9": all(v <= 1e-9 for v in agreement.values()),
        "ranx values differing from pytrec_eval (tie order)": sum(d > 1e-9 for d in ranx_diff),
        "ranx values compared": len(ranx_diff),
    }


# --------------------------------------------------------------------------- whole process

PYTREC_SCRIPT = """
import json, sys, pytrec_eval
with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)
values = pytrec_eval.RelevanceEvaluator(
    qrels, {'P', 'recall', 'ndcg_cut', 'recip_rank', 'map', 'success'}).evaluate(run)
names = json.loads(sys.argv[3])
print(json.dumps({m: sum(v[m] for v in values.values()) / len(values) for m in names}))
"""
RANX_SCRIPT = """
import json, sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind='trec')
run = Run.from_file(sys.argv[2], kind='trec')
print(json.dumps(evaluate(qrels, run, json.loads(sys.argv[3]))))
"""


def _timed(cmd: list[str], env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT, env=env)
    return time.perf_counter() - start, done.stdout


def _means(tool: str, stdout: str) -> dict[str, float]:
    if tool == "ci-eval":  # trec_eval's lines: name, "all", value
        fields = (line.split("\t") for line in stdout.splitlines())
        return {f[0].strip(): float(f[2]) for f in fields if f[0].strip() in ALL_TREC}
    data = json.loads(stdout)
    if tool.startswith("ranx"):
        return {t: data[_ranx_name(t)] for t in ALL_TREC}
    return data


def whole_process(sizes=((7000, 200), (7000, 1000)), repeat: int = 5) -> dict:
    """Median wall time of each tool as a fresh process, the ratios and the agreement."""
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for queries, depth in sizes:
            qrels, run = generate(Path(tmp), queries, depth)
            files = [str(qrels), str(run)]
            ranx_names = json.dumps([_ranx_name(t) for t in ALL_TREC])
            commands = {
                "ci-eval": [sys.executable, "-m", "ci_eval", "evaluate", "-m", "all_trec",
                            *files],
                "pytrec_eval": [sys.executable, "-c", PYTREC_SCRIPT, *files,
                                json.dumps(ALL_TREC)],
                "ranx (numba cache warm)": [sys.executable, "-c", RANX_SCRIPT, *files,
                                            ranx_names],
                "ranx (fresh numba cache)": [sys.executable, "-c", RANX_SCRIPT, *files,
                                             ranx_names],
            }
            _timed(commands["ranx (numba cache warm)"], _env())  # fill numba's cache
            times: dict[str, list[float]] = {name: [] for name in commands}
            printed: dict[str, str] = {}
            # ranx takes ten to a hundred times longer: fewer runs of it (the count is shown).
            runs = {name: repeat for name in commands}
            runs["ranx (numba cache warm)"] = min(repeat, 2)
            runs["ranx (fresh numba cache)"] = 1
            for turn in range(repeat):
                for name, cmd in commands.items():
                    if turn >= runs[name]:
                        continue
                    if name == "ranx (fresh numba cache)":
                        with tempfile.TemporaryDirectory() as cache:
                            seconds, printed[name] = _timed(cmd, _env(cache))
                    else:
                        seconds, printed[name] = _timed(cmd, _env())
                    times[name].append(seconds)
            reference = _means("pytrec_eval", printed["pytrec_eval"])
            agreement = {}
            for name in commands:
                means = _means(name, printed[name])
                agreement[name] = sum(f"{means[m]:.4f}" != f"{reference[m]:.4f}" for m in ALL_TREC)
            medians = {name: _median(t) for name, t in times.items()}
            ours = medians["ci-eval"]
            out[f"{queries}x{depth}"] = {
                "load": load(),
                "runs": runs,
                "seconds": medians,
                "ci-eval / pytrec_eval": ours / medians["pytrec_eval"],
                "ci-eval / ranx (numba cache warm)": ours / medians["ranx (numba cache warm)"],
                "ci-eval / ranx (fresh numba cache)": ours / medians["ranx (fresh numba cache)"],
                "means differing from pytrec_eval at 4 decimals": agreement,
            }
    return out


# --------------------------------------------------------------------------- report


def _table(rows: list[tuple], header: tuple) -> str:
    cells = [tuple(str(c) for c in header)] + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def report(figures: dict) -> str:
    parts = [f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}, numpy {np.__version__}"]
    e = figures.get("engine")
    if e:
        s = e["seconds"]
        ours = s["ci-eval compute() from lists"]
        rows = []
        for name, sec in s.items():
            ratio = "" if name.startswith("ci-eval") else f"{ours / sec:.2f}"
            rows.append((name, f"{sec:.3f}", ratio))
        parts.append(
            f"\nmetric engine: {e['queries']:,} queries x {e['depth']:,} results, 6 measures, "
            f"median of {e['repeat']} (load {e['load']})\n"
            + _table(rows, ("", "seconds", "ci-eval compute() / this"))
            + "\nci-eval vs pytrec_eval, max |difference| per query: "
            + ", ".join(f"{k} {v:.1e}" for k, v in e["max |difference| vs pytrec_eval"].items())
            + f"\nranx vs pytrec_eval: {e['ranx values differing from pytrec_eval (tie order)']}"
            f" of {e['ranx values compared']} per-query values differ (tie order)"
        )
    w = figures.get("whole_process")
    if w:
        for size, f in w.items():
            ours = f["seconds"]["ci-eval"]
            rows = [(name, f"{sec:.2f}", f["runs"][name],
                     "" if name == "ci-eval" else f"{ours / sec:.2f}",
                     f["means differing from pytrec_eval at 4 decimals"][name])
                    for name, sec in f["seconds"].items()]
            parts.append(
                f"\nwhole process, TREC files {size.replace('x', ' x ')}, all_trec measures "
                f"({len(ALL_TREC)} means), median (load {f['load']})\n"
                + _table(rows, ("", "seconds", "runs", "ci-eval / this",
                                "means != pytrec_eval"))
            )
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="7,000 x 200 only, three repeats")
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure (default 5)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 5)
    depth = 200 if args.quick else 1000
    figures = {"engine": engine(7000, depth, repeat)}
    sizes = ((7000, 200),) if args.quick else ((7000, 200), (7000, 1000))
    figures["whole_process"] = whole_process(sizes, repeat)
    print(report(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
