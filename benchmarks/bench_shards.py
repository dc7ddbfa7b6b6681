"""Sharding: one job against N shards, the merge at scale, and peak memory of run, merge
and compare, each command a whole process; and where `run`'s own time goes.

    python benchmarks/bench_shards.py                  # 4,000 x 50 ms and 100,000 instant
    python benchmarks/bench_shards.py --slow 400 --scale 10000   # a quick look
    python benchmarks/bench_shards.py --slow 0 --scale 100000,1000000 --before 73e68d3
    python benchmarks/bench_shards.py --slow 0 --scale 1000000 --stages 0 --run-only --before REV
    python benchmarks/bench_shards.py --slow 0 --scale 10000,100000 --stages 0 --run-only --before REV --repeat 3

``--before REV`` measures the same commands at that git revision too, from a temporary git
worktree, on the same gold sets (its artefacts are its own format: their bytes per question
are the before figure). ``--stages`` (on by default at 100,000 questions or fewer) times
`run`'s stages in this process: gold-set loading, retrieval with result cleaning,
evaluation, serialisation. ``--run-only`` measures only the unsharded `run` at each scale:
its wall and CPU seconds, its peak and its artefact's bytes a question; ``--repeat N``
alternates this ci-eval and ``--before``'s N times, and ``--bytecode`` compiles both first.

100,000 questions against a 50 ms retriever is 21 minutes at concurrency 4 on one job: too
long for this shared machine. The slow figure is measured at ``--slow`` questions (1 job,
then the 8 shards one after another, as 8 runners would run them side by side) and scaled
linearly to 100,000, labelled as such; the merge, and every peak, are measured at
``--scale`` questions with an instant retriever. Peak memory is the child's ru_maxrss, read
in a fresh wrapper process per command so no earlier peak is counted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_evaluate import _worktree  # noqa: E402

TARGET = 100_000
LATENCY_S = 0.05
CONCURRENCY = 4  # the retriever's default `concurrency`

RETRIEVERS = f"LATENCY_S = {LATENCY_S!r}\n" + textwrap.dedent(
    """
    import time
    RANKED = [(f"c{j}", 1.0 / (j + 1)) for j in range(15)]
    def slow(question, k):
        time.sleep(LATENCY_S)
        return RANKED
    def instant(question, k):
        return RANKED
    """
)

# Runs one command and prints its wall time and peak RSS (its own, not this wrapper's).
_MEASURE = textwrap.dedent(
    """
    import json, resource, subprocess, sys, time
    start = time.perf_counter()
    done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    print(json.dumps({"code": done.returncode, "seconds": seconds, "peak_mb": peak, "cpu_s": cpu,
                      "stderr": done.stderr.decode()[-500:]}))
    """
)


def _project(root: Path, questions: int, target: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "bench_retrievers.py").write_text(RETRIEVERS)
    rows = [{"id": f"q{i:07d}", "question": f"question number {i}", "gold": [f"c{i % 23}"],
             "tags": [f"t{i % 5}"]} for i in range(questions)]
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": rows}))
    (root / "index.json").write_text(json.dumps({"version": "v1", "ids": [f"c{j}" for j in range(40)]}))
    (root / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = 5\n[retriever]\ntype = "python"\ntarget = "bench_retrievers:{target}"\n'
        f'concurrency = {CONCURRENCY}\n[index]\nmanifest = "index.json"\n')
    return root


# ci-eval with its artefact size limit raised: at 1,000,000 questions an artefact (about
# 480 MB) is past the 128 MiB a later run reads as its baseline, so `run` would refuse to
# write it. Only the limit changes; the process is otherwise `python -m ci_eval`.
_UNLIMITED = ("import sys; import ci_eval.inputs.loaders as loaders; loaders.MAX_ARTEFACT_BYTES = 1 << 40; "
              "from ci_eval.cli import main; sys.exit(main(sys.argv[1:]))")


def _measure(root: Path, *args: str, code: Path = REPO) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(code)])}
    argv = [sys.executable, "-c", _MEASURE, sys.executable, "-c", _UNLIMITED, *args]
    out = json.loads(subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=True).stdout)
    if out["code"] not in (0, 1):
        raise RuntimeError(f"ci-eval {' '.join(args)} exited {out['code']}: {out['stderr']}")
    return out


def _whole_parts_merge(root: Path, count: int, code: Path = REPO) -> tuple[dict, list[dict], dict]:
    """One unsharded run, ``count`` shard runs one after another, then their merge."""
    whole = _measure(root, "run", "--quiet", "--out", "whole.json", code=code)
    parts = [_measure(root, "run", "--quiet", "--shard", f"{i}/{count}", "--out", f"part-{i}.json", code=code)
             for i in range(1, count + 1)]
    merge = _measure(root, "merge", *[f"part-{i}.json" for i in range(1, count + 1)], "--out", "merged.json",
                     code=code)
    return whole, parts, merge


def one_job_vs_shards(questions: int, shards: int = 8) -> dict:
    """Wall time of one job against the slowest of ``shards`` jobs plus the merge."""
    with tempfile.TemporaryDirectory() as tmp:
        whole, parts, merge = _whole_parts_merge(_project(Path(tmp), questions, "slow"), shards)
    slowest = max(p["seconds"] for p in parts)
    scale = TARGET / questions
    return {
        "questions": questions, "shards": shards, "latency_ms": LATENCY_S * 1000, "concurrency": CONCURRENCY,
        "one_job_s": whole["seconds"], "ideal_one_job_s": questions * LATENCY_S / CONCURRENCY,
        "shard_s": [round(p["seconds"], 2) for p in parts], "slowest_shard_s": slowest,
        "merge_s": merge["seconds"], "sharded_s": slowest + merge["seconds"],
        "speed_up": whole["seconds"] / (slowest + merge["seconds"]),
        "extrapolated_to": TARGET,
        "extrapolated_one_job_s": whole["seconds"] * scale,
        "extrapolated_slowest_shard_s": slowest * scale,
    }


def _summary(path: Path) -> dict:
    """The summary line of an artefact of either version: it is one line in both layouts."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(' "summary": '):
                return json.loads(line[len(' "summary": '):].rstrip().rstrip(","))
    raise ValueError(f"{path} has no summary line")


def at_scale(questions: int, shards: int = 8, code: Path = REPO, compare: bool = True) -> dict:
    """An instant retriever at ``questions``: peaks of run, merge and (``compare``) compare,
    merge time, with the ci-eval at ``code``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp), questions, "instant")
        run, parts, merge = _whole_parts_merge(root, shards, code)
        compared = (_measure(root, "compare", "whole.json", "merged.json", "--format", "json", code=code)
                    if compare else {"seconds": None, "peak_mb": None})
        sizes = {name: (root / name).stat().st_size for name in ("whole.json", "merged.json", "part-1.json")}
        same = _summary(root / "whole.json")["overall"] == _summary(root / "merged.json")["overall"]
    return {
        "questions": questions, "shards": shards,
        "run": {"seconds": run["seconds"], "peak_mb": run["peak_mb"]},
        "shard_run_peak_mb": max(p["peak_mb"] for p in parts),
        "merge": {"seconds": merge["seconds"], "cpu_s": merge["cpu_s"], "peak_mb": merge["peak_mb"]},
        "compare": {"seconds": compared["seconds"], "peak_mb": compared["peak_mb"]},
        "artefact_mb": round(sizes["whole.json"] / 2**20, 1), "part_mb": round(sizes["part-1.json"] / 2**20, 1),
        "bytes_per_question": round(sizes["whole.json"] / questions),
        "merged_means_equal_unsharded": same,
    }


def run_alone(questions: int, code: Path = REPO) -> dict:
    """Only the unsharded `run` at ``questions`` with an instant retriever: its wall and CPU
    seconds, its peak and its artefact's bytes a question."""
    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp), questions, "instant")
        run = _measure(root, "run", "--quiet", "--out", "whole.json", code=code)
        size = (root / "whole.json").stat().st_size
    return {"questions": questions, "seconds": run["seconds"], "cpu_s": run["cpu_s"], "peak_mb": run["peak_mb"],
            "bytes_per_question": round(size / questions)}


def stages(questions: int) -> dict:
    """`run`'s stages in this process with the instant retriever: each consumed whole
    before the next starts, so each is timed alone (a real run interleaves them); wall and
    CPU seconds (this process's, the runner's threads included)."""
    from ci_eval.core.artefact.artefact_writer import artefact_pieces
    from ci_eval.core.artefact.evaluation import evaluate_rows
    from ci_eval.core.artefact.run_columns import RunColumns
    from ci_eval.inputs.artefact_out import write_artefact
    from ci_eval.inputs.loaders import load_config
    from ci_eval.retrieval.pipeline import load_inputs, retrieve, run_head

    try:
        from ci_eval.inputs.collector import collections_spaced
        spaced = collections_spaced()
    except ImportError:  # a revision from before the run spaced out its collections
        spaced = contextlib.nullcontext()
    seconds, cpu, collector = {}, {}, contextlib.ExitStack()

    def lap(name: str, start: tuple[float, float]) -> tuple[float, float]:
        seconds[name], cpu[name] = time.perf_counter() - start[0], time.process_time() - start[1]
        return time.perf_counter(), time.process_time()

    with tempfile.TemporaryDirectory() as tmp:
        root = _project(Path(tmp), questions, "instant")
        sys.path.insert(0, str(root))
        try:
            start = time.perf_counter(), time.process_time()
            inputs = load_inputs(load_config(root / "ci-eval.toml"))
            start = lap("gold load", start)
            collector.enter_context(spaced)  # the cycle collector as the run has it while its rows stream
            results = list(retrieve(inputs))
            start = lap("retrieval and cleaning", start)
            cfg = inputs.config
            columns = RunColumns(cfg.metrics, cfg.abstain_below, cfg.k, cfg.retriever.depth)
            rows = list(evaluate_rows(inputs.gold, results, k=cfg.k, metrics=cfg.metrics,
                                      relevance_level=cfg.relevance_level, index_ids=inputs.manifest.ids))
            for row in rows:
                columns.add(row)
            start = lap("evaluation", start)
            head = run_head(inputs, None, None, None, inputs.gold.questions)
            write_artefact(root / "run.json", artefact_pieces(head, rows, lambda: {"summary": columns.summary()}),
                           len(rows))
            lap("serialisation", start)
        finally:
            collector.close()
            sys.path.remove(str(root))
    seconds["total"], cpu["total"] = sum(seconds.values()), sum(cpu.values())
    return {"questions": questions, "seconds": {k: round(v, 2) for k, v in seconds.items()},
            "cpu_s": {k: round(v, 2) for k, v in cpu.items()}}


def _runs_alone(figures: dict, args, before: str | None) -> None:
    """``run_alone`` at each scale, ``args.repeat`` times, this ci-eval then ``before``'s."""
    codes = {"now": REPO, **({"before": Path(before)} if before else {})}
    if args.bytecode:
        for code in codes.values():
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "ci_eval")], check=True)
    for n in (int(x) for x in args.scale.split(",")):
        runs = figures[f"run_{n}"] = {name: [] for name in codes if name == "now" or n <= args.before_up_to}
        for _ in range(args.repeat):
            for name in runs:
                runs[name].append(run_alone(n, codes[name]))
        if args.repeat == 1:
            figures[f"run_{n}"] = {name: measured[0] for name, measured in runs.items()}
        print(json.dumps({f"run_{n}": figures[f"run_{n}"]}), file=sys.stderr, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark sharded runs and the merge.")
    parser.add_argument("--slow", type=int, default=4000, help="questions for the 50 ms comparison (0: skip it)")
    parser.add_argument("--scale", default=str(TARGET),
                        help="questions for the merge and memory figures, comma separated (default: %(default)s)")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--before", metavar="REV", help="also measure ci-eval at this git revision")
    parser.add_argument("--before-up-to", type=int, default=TARGET, metavar="N",
                        help="measure --before only at scales up to N questions (default: %(default)s; "
                             "before version 2 a 1,000,000-question run took 5.8 GB and could not write "
                             "its artefact under the size limit)")
    parser.add_argument("--compare-up-to", type=int, default=TARGET, metavar="N",
                        help="time compare only at scales up to N questions (default: %(default)s; "
                             "benchmarks/bench_scale.py measures compare itself)")
    parser.add_argument("--stages", type=int, default=TARGET, metavar="N",
                        help="questions for the in-process stage timings (0: skip them; default: %(default)s)")
    parser.add_argument("--run-only", action="store_true",
                        help="at each --scale measure only the unsharded run (and --before's)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="with --run-only: measure each scale N times, this ci-eval and --before's "
                             "alternated (default: %(default)s)")
    parser.add_argument("--bytecode", action="store_true",
                        help="compile each measured ci-eval's modules first, as an installed package has "
                             "them (where PYTHONDONTWRITEBYTECODE is set, every process compiles them again)")
    args = parser.parse_args(argv)
    figures: dict = {}
    if args.run_only:
        with _worktree(args.before) as before:
            _runs_alone(figures, args, before)
        print(json.dumps(figures, indent=1))
        return 0
    if args.stages:
        figures["run_stages"] = stages(args.stages)
    if args.slow:
        figures["one_job_vs_shards"] = one_job_vs_shards(args.slow, args.shards)
    with _worktree(args.before) as before:
        for n in (int(x) for x in args.scale.split(",")):
            compare = n <= args.compare_up_to
            figures[f"at_scale_{n}"] = {"now": at_scale(n, args.shards, compare=compare)}
            if before and n <= args.before_up_to:
                figures[f"at_scale_{n}"]["before"] = at_scale(n, args.shards, Path(before), compare)
            print(json.dumps({f"at_scale_{n}": figures[f"at_scale_{n}"]}), file=sys.stderr, flush=True)
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
