"""`ci-eval run` against the cost of writing its own artefact, and `ci-eval evaluate`
against pytrec_eval, each as a ratio taken in one run (issue 49).

    python benchmarks/bench_floor.py [--sizes 20000,100000] [--trec 7000x200,7000x1000] [--repeat 5]
                                     [--before REV] [--only run|evaluate]

**run.** bench_scale.py's project (an instant python retriever, depth 15, one question in
ten unanswerable) at each size; ``ci-eval run --quiet --out run.json`` is timed as a whole
process, as a user runs it. The floor is the least any writer of that artefact pays: the
artefact is loaded with ``json.load`` once, then ``json.dumps(data, sort_keys=True,
ensure_ascii=False, separators=(",", ":"))`` is timed in this process: one call of json's C
encoder over the same content, in the writer's key order and separators (the bytes differ
from the file only by the newlines and indents between keys and rows; an ``indent`` would
switch json to its pure-Python encoder, a floor three times higher). No start-up, no gold
set read, no retriever, no metrics: "run / floor" is how many artefact-encodings a whole run
costs.

**evaluate.** bench_engine.py's TREC files (7,000 queries, graded qrels, tied scores):
``ci-eval evaluate -m all_trec QRELS RUN`` against pytrec_eval's ``parse_qrel`` +
``parse_run`` + ``RelevanceEvaluator(...).evaluate`` of the same files
(bench_engine.PYTREC_SCRIPT), each a fresh process; the means are compared at four decimals.

The variants take turns, ``--repeat`` rounds; medians of each and the ratio of medians.
``--before REV`` times ci-eval at that revision too (its ``ci_eval`` exported with ``git
archive``, byte-compiled, on the same files; ``--after REV`` likewise in place of this
checkout) and checks that the two trees write the same bytes: evaluate's output as it is, the artefact with what differs from one run to the next
blanked (``created_at``, each row's latency and the summary's latency figures).
The load average (``uptime``) is printed before and after. Nothing here asserts a time.

``--where N`` says where `run`'s own time goes at N questions instead: ``ci_eval.cli.main``
called in this process (the CLI ends with ``os._exit``, so a profiler around ``python -m
ci_eval`` records nothing) under a sampling profiler (every millisecond of CPU, each sample
put in the first stage of WHERE its stack holds), the share of each stage. Unlike cProfile
it does not inflate the stages made of many small Python calls.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
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

import bench_engine  # noqa: E402
import bench_scale  # noqa: E402


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(cmd: list[str], cwd: Path, env: dict, cpu: list | None = None) -> tuple[float, bytes]:
    """Wall seconds and stdout of one process; its CPU seconds (with its children's, such
    as the retriever's worker) appended to ``cpu``."""
    start, used = time.perf_counter(), _children_cpu()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
    seconds = time.perf_counter() - start
    if cpu is not None:
        cpu.append(_children_cpu() - used)
    if done.returncode != 0:
        raise SystemExit(f"{cmd[:6]} exited {done.returncode}: {done.stderr.decode()[-800:]}")
    return seconds, done.stdout


def floor_seconds(artefact: Path) -> float:
    """One timed ``json.dumps`` of the artefact's content (see the module's docstring)."""
    with artefact.open(encoding="utf-8") as fh:
        data = json.load(fh)
    start = time.perf_counter()
    json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return time.perf_counter() - start


# What differs between two runs of one tree: the time it started, and latencies (a row's
# comes after its metrics list, first gold rank and top score).
_STAMP = re.compile(rb'^ "created_at": "[^"]*"', re.M)
_ROW_LATENCY = re.compile(rb'^(  \[.*?\],(?:-?\d+|null),(?:[-+.\deE]+|null),)([-+.\deE]+|null)', re.M)
_SUMMARY_LATENCY = re.compile(rb'"latency_ms":\{[^}]*\}')


def _sha(path: Path) -> str:
    """sha256 of the artefact's bytes with its start time and latencies blanked."""
    text = _STAMP.sub(b' "created_at": ""', path.read_bytes())
    text = _SUMMARY_LATENCY.sub(b'"latency_ms":{}', _ROW_LATENCY.sub(rb"\g<1>0", text))
    return hashlib.sha256(text).hexdigest()[:16]


@contextlib.contextmanager
def _exported(rev: str | None):
    """ci_eval at ``rev`` in a temporary folder (git archive), or None."""
    if rev is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="ci-eval-before-") as folder:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "ci_eval"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        yield folder


def bench_run(tmp: Path, n: int, trees: dict[str, Path], repeat: int) -> dict:
    folder = tmp / f"run-{n}"
    bench_scale.make_project(folder, n)
    env = {name: bench_scale._env(code, BENCH_SHIFT="1", BENCH_N=str(n)) for name, code in trees.items()}
    times: dict[str, list[float]] = {name: [] for name in [*trees, "floor"]}
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    digests: dict[str, set] = {name: set() for name in trees}
    for _ in range(repeat):
        for name in trees:
            out = folder / f"{name}.json"
            seconds, _ = _timed([sys.executable, "-m", "ci_eval", "run", "--quiet", "--out", out.name],
                                folder, env[name], cpu[name])
            times[name].append(seconds)
            digests[name].add(_sha(out))
        times["floor"].append(floor_seconds(folder / "now.json"))
    medians = {name: statistics.median(t) for name, t in times.items()}
    result = {"seconds": {k: round(v, 3) for k, v in medians.items()},
              "CPU seconds (with the worker)": {k: round(statistics.median(v), 3) for k, v in cpu.items()},
              "artefact MB": round((folder / "now.json").stat().st_size / 1e6, 1)}
    for name in trees:
        result[f"{name} / floor"] = round(medians[name] / medians["floor"], 2)
    if "before" in trees:
        result["now / before"] = round(medians["now"] / medians["before"], 3)
        result["CPU now / before"] = round(statistics.median(cpu["now"]) / statistics.median(cpu["before"]), 3)
    result["artefact sha256"] = {name: sorted(d) for name, d in digests.items()}
    result["same bytes"] = len({d for ds in digests.values() for d in ds}) == 1
    return result


def bench_evaluate(tmp: Path, queries: int, depth: int, trees: dict[str, Path], repeat: int) -> dict:
    qrels, run = bench_engine.generate(tmp, queries, depth)
    files = [str(qrels), str(run)]
    commands = {name: ([sys.executable, "-m", "ci_eval", "evaluate", "-m", "all_trec", *files],
                       {**os.environ, "PYTHONPATH": str(code)}) for name, code in trees.items()}
    commands["pytrec_eval"] = ([sys.executable, "-c", bench_engine.PYTREC_SCRIPT, *files,
                                json.dumps(bench_engine.ALL_TREC)], dict(os.environ))
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    printed: dict[str, set] = {name: set() for name in commands}
    for _ in range(repeat):
        for name, (cmd, env) in commands.items():
            seconds, stdout = _timed(cmd, tmp, env, cpu[name])  # not the checkout: `-m` puts the cwd first
            times[name].append(seconds)
            printed[name].add(stdout)
    medians = {name: statistics.median(t) for name, t in times.items()}
    reference = json.loads(next(iter(printed["pytrec_eval"])))
    cpu_medians = {name: statistics.median(t) for name, t in cpu.items()}
    result = {"seconds": {k: round(v, 3) for k, v in medians.items()},
              "CPU seconds": {k: round(v, 3) for k, v in cpu_medians.items()}}
    for name in trees:
        result[f"{name} / pytrec_eval"] = round(medians[name] / medians["pytrec_eval"], 3)
        result[f"CPU {name} / pytrec_eval"] = round(cpu_medians[name] / cpu_medians["pytrec_eval"], 3)
        means = {f[0].strip(): float(f[2]) for f in
                 (line.split("\t") for line in next(iter(printed[name])).decode().splitlines())}
        result[f"{name}: means differing from pytrec_eval"] = sum(
            f"{means[m]:.4f}" != f"{reference[m]:.4f}" for m in bench_engine.ALL_TREC)
    outputs = {o for name in trees for o in printed[name]}
    result["same bytes"] = len(outputs) == 1
    return result


# Stages of `run`, each named by a function its samples pass through; a sample goes to the
# first stage listed whose function is on its stack (the size check encodes too, the metrics
# pull the retriever's results through them, the writer pulls the rows).
WHERE = (
    ("imports", ("<frozen importlib._bootstrap>", "_find_and_load")),
    ("size checks (gold set's bytes, head)", ("artefact_size.py", "known_bytes"),
     ("artefact_size.py", "head_bytes")),
    ("gold set read and checked", ("loaders.py", "load_gold_set")),
    ("config and the other inputs", ("loaders.py", "load_config"), ("pipeline.py", "load_inputs")),
    ("retriever's results received and checked", ("worker.py", "run_in_worker")),
    ("metrics and rows", ("evaluation.py", "evaluate_rows")),
    ("summary columns", ("run_columns.py", "add")),
    ("artefact encoded (json's C encoder and the batches)", ("artefact_writer.py", "artefact_pieces")),
    ("artefact written", ("files.py", "_write_all")),
)


def where(n: int) -> dict:
    """Shares of `run`'s CPU samples by stage (WHERE) at ``n`` questions, in this process."""
    import signal

    folder = Path(tempfile.mkdtemp(prefix="ci-eval-where-"))
    bench_scale.make_project(folder, n)
    os.environ.update(BENCH_SHIFT="1", BENCH_N=str(n))
    os.chdir(folder)
    sys.path.insert(0, str(folder))
    counts: dict[str, int] = {}

    def sample(_signum, frame) -> None:
        names = set()
        while frame is not None:
            names.add((os.path.basename(frame.f_code.co_filename), frame.f_code.co_name))
            frame = frame.f_back
        stage = next((stage for stage, *functions in WHERE if names.intersection(functions)), "other")
        counts[stage] = counts.get(stage, 0) + 1

    signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
    from ci_eval.cli import main as cli

    cli(["run", "--quiet", "--out", "run.json"])
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    total = sum(counts.values())
    return {stage: f"{100 * c / total:.1f} %" for stage, c in sorted(counts.items(), key=lambda kv: -kv[1])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000", help="questions for run")
    parser.add_argument("--trec", default="7000x200,7000x1000", help="queries x depth for evaluate")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", metavar="REV", help="also time ci-eval at this revision")
    parser.add_argument("--after", metavar="REV", help="time ci-eval at this revision as \"now\" "
                        "(default: this checkout)")
    parser.add_argument("--only", choices=("run", "evaluate"))
    parser.add_argument("--where", type=int, metavar="N", help="where run's time goes at N questions (only that)")
    args = parser.parse_args(argv)
    if args.where:
        print(f"load before: {_uptime()}")
        print(json.dumps(where(args.where), indent=1))
        print(f"load after: {_uptime()}")
        return 0
    print(f"load before: {_uptime()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp, _exported(args.before) as before, _exported(args.after) as after:
        trees = {"now": Path(after) if after else ROOT} | ({"before": Path(before)} if before else {})
        for code in trees.values():  # as an install has it
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "ci_eval")], check=True)
        if args.only != "evaluate":
            for n in (int(s) for s in args.sizes.split(",") if s):
                print(f"run {n:,}: {json.dumps(bench_run(Path(tmp), n, trees, args.repeat))}", flush=True)
                print(f"  load: {_uptime()}", flush=True)
        if args.only != "run":
            for shape in (s for s in args.trec.split(",") if s):
                queries, depth = (int(x) for x in shape.split("x"))
                figures = bench_evaluate(Path(tmp), queries, depth, trees, args.repeat)
                print(f"evaluate {queries:,} x {depth:,}: {json.dumps(figures)}", flush=True)
                print(f"  load: {_uptime()}", flush=True)
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
