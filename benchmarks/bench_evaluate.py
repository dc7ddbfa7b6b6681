"""`ci-eval evaluate` against C trec_eval and pytrec_eval, and against an earlier ci-eval,
in one run on the same files.

    python benchmarks/bench_evaluate.py [--trec-eval PATH] [--before REV] [--repeat N] [--quick]

Data (generated, see ``bench_engine.generate``): 7,000 queries x 1,000 tie-heavy results
(1,500 score levels a query, so about a third of the rows sit in runs of tied scores, most
of them two rows long), 100,000 x 100, and 7,000 x 200. Every tool is a fresh process
asked for the same measures (P, recall, ndcg_cut at trec_eval's cutoffs, success, recip_rank,
map), with and without ``-q``; the tools take turns so a busy machine slows them alike;
times are medians. ``--trec-eval`` names a trec_eval binary you built (nothing is
downloaded); ``--before REV`` also times ci-eval as it was at that git revision, from a
temporary worktree. Both ci-eval trees are byte-compiled first, as an install would be.
Values: every ``all`` line must equal trec_eval's (or pytrec_eval's at four decimals when
trec_eval is not given). Then the two steps issue 16 names, in-process:
the tie re-ordering (a full lexsort of the tied rows vs each neighbouring pair compared
once, runs of two swapped, longer runs sorted) and ``-q``
formatting (a call per value vs a template per row), each checked to give identical
results. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_engine  # noqa: E402

MEASURES = ["-m", "P", "-m", "recall", "-m", "ndcg_cut", "-m", "success", "-m", "recip_rank", "-m", "map"]
PYTREC = """
import json, sys, pytrec_eval
with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)
values = pytrec_eval.RelevanceEvaluator(qrels, {'P', 'recall', 'ndcg_cut', 'recip_rank', 'map', 'success'}).evaluate(run)
names = sorted({m for v in values.values() for m in v})
print("".join(f"{m}\\tall\\t{sum(v[m] for v in values.values()) / len(values):.4f}\\n" for m in names))
"""


def _all_lines(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] == "all" and parts[0].strip() not in ("runid", "num_q"):
            out[parts[0].strip()] = parts[2]
    return out


@contextlib.contextmanager
def _worktree(rev: str | None):
    if rev is None:
        yield None
        return
    folder = tempfile.mkdtemp(prefix="ci-eval-before-")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", folder, rev], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", folder], check=True)


def _env(path: str) -> dict:
    return {**os.environ, "PYTHONPATH": path}


def _compiled(tree: str) -> None:
    """Byte-compile a checkout's package once, as pip does when it installs one: with
    PYTHONDONTWRITEBYTECODE set, every timed process would otherwise compile each module
    from source again (about 0.05 s of start-up), which no installed ci-eval does."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(tree) / "ci_eval")], check=True)


def _tools(trec_eval: str | None, before: str | None, per_query: bool):
    q = ["-q"] if per_query else []
    tools = {"ci-eval": ([sys.executable, "-m", "ci_eval", "evaluate", *q, *MEASURES], _env(str(ROOT)))}
    if before:
        tools["ci-eval before"] = ([sys.executable, "-m", "ci_eval", "evaluate", *q, *MEASURES], _env(before))
    if trec_eval:
        tools["trec_eval (C)"] = ([trec_eval, *q, *MEASURES], None)
    try:
        import pytrec_eval  # noqa: F401

        if not per_query:
            tools["pytrec_eval"] = ([sys.executable, "-c", PYTREC], None)
    except ImportError:
        pass
    return tools


def whole_process(files, trec_eval, before, repeat, per_query) -> dict:
    tools = _tools(trec_eval, before, per_query)
    times: dict[str, list[float]] = {name: [] for name in tools}
    cpu: dict[str, list[float]] = {name: [] for name in tools}
    printed: dict[str, str] = {}
    for _ in range(repeat):
        for name, (argv, env) in tools.items():
            start, used = time.perf_counter(), _children_cpu()
            # Not from the checkout: `python -m` puts the working folder first on the path,
            # and ci-eval at --before would then be the checkout's code again.
            done = subprocess.run([*argv, *files], capture_output=True, text=True, env=env,
                                  cwd=os.path.dirname(files[0]))
            times[name].append(time.perf_counter() - start)
            cpu[name].append(_children_cpu() - used)
            if done.returncode != 0:
                raise SystemExit(f"{name} failed: {done.stderr.strip()[:300]}")
            printed[name] = done.stdout
    reference_name = "trec_eval (C)" if trec_eval else ("pytrec_eval" if "pytrec_eval" in tools else None)
    medians = {name: statistics.median(t) for name, t in times.items()}
    cpu_medians = {name: statistics.median(t) for name, t in cpu.items()}
    result = {"seconds": medians, "CPU seconds (user + system)": cpu_medians}
    if reference_name:
        ref = _all_lines(printed[reference_name])
        for name in tools:
            got = _all_lines(printed[name])
            if reference_name == "pytrec_eval":
                got = {m: f"{float(v):.4f}" for m, v in got.items()}
            differing = sorted(m for m in ref if got.get(m) != ref[m])
            result.setdefault("differing from " + reference_name, {})[name] = differing
        if per_query and trec_eval:
            result["-q output identical to trec_eval"] = {
                name: printed[name].replace(" ", "") == printed["trec_eval (C)"].replace(" ", "")
                for name in tools}
    for name in tools:
        if name != "ci-eval":
            result[f"ci-eval / {name}"] = medians["ci-eval"] / medians[name]
            result[f"CPU ci-eval / {name}"] = cpu_medians["ci-eval"] / cpu_medians[name]
    return result


def _children_cpu() -> float:
    """CPU seconds of the finished child processes so far: on a machine other jobs load,
    a steadier measure than the wall clock."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def steps(files) -> dict:
    """The two steps of issue 16, in-process, old way against new, identical results."""
    from ci_eval.core.measure import ranking
    from ci_eval.trec import measures as m
    from ci_eval.trec.judge import judge
    from ci_eval.trec.parse import read_qrels, read_run

    qrels, run = read_qrels(files[0]), read_run(files[1])
    n = len(run.scores)

    def lexsort_all():
        # The reference: every row of a run of tied scores, lexsorted by (run, id descending).
        boundary = np.zeros(n, dtype=bool)
        boundary[run.heads[1:] - 1] = True
        tied = (run.scores[1:] == run.scores[:-1]) & ~boundary[:-1]  # rows i and i + 1
        tie = np.flatnonzero(tied)
        rows = np.unique(np.concatenate((tie, tie + 1)))
        run_id = np.cumsum(~tied[np.maximum(rows - 1, 0)] | (rows == 0))  # a run starts
        key = np.ascontiguousarray(run.words[rows]).view(">u8").astype(np.uint64)
        inner = np.lexsort([~key[:, k] for k in reversed(range(key.shape[1]))] + [run_id])
        return rows, inner

    def pairs_then_runs():
        return ranking.order_moves(None, run.scores, run.words, run.heads, run.head_codes)[1]

    def final_order(moves):
        fixed = np.arange(n)
        fixed[moves[0]] = moves[0][moves[1]]
        return fixed

    timings, results = {}, {}
    for label, fn in (("full lexsort", lexsort_all),
                      ("pairs compared once, runs of two swapped, longer runs sorted",
                       pairs_then_runs)):
        samples = []
        for _ in range(3):
            start = time.perf_counter()
            results[label] = fn()
            samples.append(time.perf_counter() - start)
        timings[label] = statistics.median(samples)
    reference, ours = results.values()
    same_order = bool(np.array_equal(final_order(reference), final_order(ours)))
    tied = int(len(reference[0]))

    judged = judge(qrels, run)
    spec = m.parse_measures(["P", "recall", "ndcg_cut", "success", "recip_rank", "map"])
    values = m.measure_values(spec, judged)
    overall = m.summary(spec, values, len(judged.qids))

    def per_value(measures, qids, values, overall, per_query):
        names = [n for n in measures.names() if n != "num_q"]
        columns = [(n, values[n].tolist()) for n in names]
        parts = [m._line(name, qid, column[row]) for row, qid in enumerate(qids) for name, column in columns]
        parts += [m._line(name, "all", value) for name, value in overall.items()]
        return "".join(parts)

    texts, fmt = {}, {}
    for label, fn in (("a call per value", per_value), ("a template per row", m.format_trec)):
        start = time.perf_counter()
        texts[label] = fn(spec, judged.qids, values, overall, True)
        fmt[label] = time.perf_counter() - start
    lines = texts["a template per row"].count("\n")
    return {"tie order seconds": timings, "tied rows": tied, "tie order identical": same_order,
            "-q formatting seconds": fmt, "-q lines": lines,
            "-q text identical": len(set(texts.values())) == 1}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", metavar="PATH", help="a trec_eval binary to run as a peer")
    parser.add_argument("--before", metavar="REV", help="also time ci-eval at this git revision")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller data, one repeat")
    parser.add_argument("--only", choices=("tie-heavy", "wide", "plain"), action="append",
                        help="only these data sets: tie-heavy 7,000 x 1,000, wide 100,000 x 100, "
                             "plain 7,000 x 200 (repeatable; default all)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    named = {"tie-heavy": (7000, 1000, 1500), "wide": (100_000, 100, 40_000), "plain": (7000, 200, 40_000)}
    sizes = ([(700, 1000, 1500), (10_000, 100, 40_000)] if args.quick
             else [named[n] for n in (args.only or named)])
    repeat = 1 if args.quick else args.repeat
    figures = {"load before": bench_engine.load()}
    with tempfile.TemporaryDirectory() as tmp, _worktree(args.before) as before:
        for tree in (str(ROOT), before):
            if tree:
                _compiled(tree)
        for queries, depth, levels in sizes:
            files = [str(f) for f in bench_engine.generate(Path(tmp), queries, depth, levels=levels)]
            label = f"{queries:,} x {depth:,}" + (" tie-heavy" if levels < 40_000 else "")
            figures[label] = {
                "means": whole_process(files, args.trec_eval, before, repeat, per_query=False),
                "-q": whole_process(files, args.trec_eval, before, repeat, per_query=True),
            }
            if levels < 40_000:
                figures[label]["steps"] = steps(files)
            print(json.dumps({label: figures[label]}, indent=1), flush=True)
    figures["load after"] = bench_engine.load()
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
