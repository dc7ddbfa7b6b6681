"""What each mechanism that exists only for speed buys on a command a user runs.

    python benchmarks/bench_mechanisms.py [--questions 100000] [--small 1000] [--repeat 3] [--busy N]
                                          [--only check,action,run,compare,evaluate] [--mechanisms A,B] [--json FILE]

Each command is a whole ``ci-eval`` process on a project shaped like a user's
(benchmarks/user_shaped.py): once as it is, and once with one mechanism switched off by a
monkeypatch made in that process before the command runs (the code path the program takes
when the mechanism cannot be used). The variants take turns, ``--repeat`` rounds, so a busy
machine slows them alike; the figures are medians of wall and CPU seconds (the process and
its children), and the ratio off / on: above 1.0 the mechanism buys that much. Nothing here
asserts a time. The commands and the mechanisms each one reaches (every command: numpy's
OpenBLAS on one thread, ci_eval/blas_threads.py; all but ``evaluate``: the small schema
checker, core/validate.py):

- ``check`` at ``--small`` questions: a small command, where start-up is most of the time.
- ``action`` at ``--small`` and ``--questions`` questions (loopback GitHub, a stored
  baseline): the gold questions checked by hand.
- ``run`` at ``--questions``: the same.
- ``compare`` at ``--questions`` (markdown, ``--json-out``, ``--summary-out``).
- ``evaluate`` on 20,000 queries x 100 results: the TREC parser's plain-layout splitter and
  its memory map of the file.

Besides the ratio of the medians, ``wall_paired`` is the median of each round's off / on: a
load that comes and goes between rounds slows both runs of a round alike. Decisions are
taken on it, beside the CPU ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

import user_shaped  # noqa: E402

# Each mechanism switched off: the path taken where it cannot be used. A mechanism removed
# from the tree has no entry (its patch would name what no longer exists); docs/benchmarks.md,
# "Speed mechanisms, measured", lists those removed with their last figures.
OFF = {
    # the TREC parser's fast paths, each with the general path it steps aside to
    "plain splitter": "import ci_eval.trec.parse as m; m._split_plain = lambda chunk, k, wanted: None",
    "memory map": "import ci_eval.trec.parse as m; m._map = lambda path, what: m._read(path, what)",
    # numpy's OpenBLAS with its thread per core, as before ci_eval/blas_threads.py
    "blas threads": "import ci_eval.cli as m; m.one_thread_here = lambda: None",
    # every document's verdict from jsonschema (imported at each start)
    "small schema checker": "import ci_eval.core.validate as m; m.fast_valid = lambda instance, schema: None",
    # each gold question held to jsonschema's verdict (its validator built once)
    "gold checked by hand": ("import ci_eval.core.gold.goldset as m; from ci_eval.schemas import load; "
                             "from jsonschema import Draft202012Validator as V; s = load('goldset'); "
                             "m._question_valid = V({'$defs': s['$defs'], '$ref': '#/$defs/question'}).is_valid"),
}
REACHES = {
    "check": ("blas threads", "small schema checker"),
    "action": ("blas threads", "small schema checker", "gold checked by hand"),
    "run": ("blas threads", "small schema checker", "gold checked by hand"),
    "compare": ("blas threads", "small schema checker"),
    "evaluate": ("blas threads", "plain splitter", "memory map"),
}
_FILES = {"blas threads": "blas_threads.py", "small schema checker": "core/validate.py", "plain splitter": "trec/parse.py", "memory map": "trec/parse.py",
          "gold checked by hand": "core/gold/goldset.py"}


def _present() -> dict[str, str]:
    """The mechanisms still in this tree."""
    return {name: code for name, code in OFF.items() if (ROOT / "ci_eval" / _FILES[name]).exists()}


def _argv(patch: str | None, args: list[str]) -> list[str]:
    prelude = f"{patch}; " if patch else ""
    return [sys.executable, "-c", f"{prelude}import sys; from ci_eval.cli import main; main()", *args]


def _timed(argv, cwd, env) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{argv[3:]} exited {done.returncode}: {done.stderr[-1500:]}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _alternated(label: str, variants: dict[str, str | None], make_run, repeat: int) -> list[dict]:
    """Each variant's median wall and CPU over ``repeat`` rounds taken in turn; ``make_run(i,
    patch)`` runs one and returns (wall, cpu)."""
    walls = {name: [] for name in variants}
    cpus = {name: [] for name in variants}
    for i in range(repeat):
        for name, patch in variants.items():
            wall, cpu = make_run(i, patch)
            walls[name].append(wall)
            cpus[name].append(cpu)
    on_wall, on_cpu = statistics.median(walls["on"]), statistics.median(cpus["on"])
    rows = []
    for name in variants:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        # each round's off over that round's on, then their median: a load that comes and
        # goes between rounds slows both sides of a round alike
        paired = statistics.median(w / on for w, on in zip(walls[name], walls["on"]))
        rows.append({"command": label, "variant": name, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
                     "wall_off_on": round(wall / on_wall, 3), "wall_paired": round(paired, 3),
                     "cpu_off_on": round(cpu / on_cpu, 3), "walls": [round(w, 2) for w in walls[name]]})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _variants(command: str) -> dict[str, str | None]:
    present = _present()
    return {"on": None, **{name: present[name] for name in REACHES[command] if name in present}}


def _project(folder: Path, questions: int) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    user_shaped.write_project(folder, questions)
    base, head = folder / "base.json", folder / "head.json"
    for side, out in (("base", base), ("head", head)):
        user_shaped.run_artefact(folder, side, out, ROOT, sys.executable)
    return base, head


def bench_run(folder: Path, repeat: int) -> list[dict]:
    env = user_shaped.environment(folder, ROOT, "head")
    return _alternated("run", _variants("run"), lambda i, patch: _timed(
        _argv(patch, ["run", "--out", str(folder / "timed-run.json"), "--quiet"]), folder, env), repeat)


def bench_compare(folder: Path, base: Path, head: Path, repeat: int) -> list[dict]:
    env = user_shaped.environment(folder, ROOT, "head")
    outs = ["--json-out", str(folder / "report.json"), "--summary-out", str(folder / "summary.md")]
    return _alternated("compare", _variants("compare"), lambda i, patch: _timed(
        _argv(patch, ["compare", str(base), str(head), *outs]), folder, env), repeat)


def bench_check(folder: Path, questions: int, repeat: int) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    user_shaped.write_project(folder, questions)
    env = user_shaped.environment(folder, ROOT, "head")
    return _alternated(f"check {questions:,}", _variants("check"), lambda i, patch: _timed(
        _argv(patch, ["check"]), folder, env), repeat)


@contextlib.contextmanager
def busy(cores: int):
    """``cores`` processes that spin for as long as the measurements last: a runner whose
    other steps, or the retriever, keep its cores busy."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def bench_evaluate(folder: Path, repeat: int) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    qrels, run = user_shaped.write_trec(folder, 20_000, 100)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return _alternated("evaluate 20,000 x 100", _variants("evaluate"), lambda i, patch: _timed(
        _argv(patch, ["evaluate", "-m", "all_trec", str(qrels), str(run)]), folder, env), repeat)


def bench_action(folder: Path, questions: int, repeat: int) -> list[dict]:
    import bench_action
    from github_standin import GitHubStandIn, fake_sha

    from ci_eval.github.artifact_zip import build_zip

    folder.mkdir(parents=True, exist_ok=True)
    user_shaped.write_project(folder, questions)
    base = folder / "base.json"
    user_shaped.run_artefact(folder, "base", base, ROOT, sys.executable)
    base_sha, head_sha = fake_sha("mech-base"), fake_sha("mech-head")
    with GitHubStandIn(bench_action.OWNER_REPO, validate=False) as standin:
        standin.add_pull(7, head_sha=head_sha, base_sha=base_sha)
        run_id = standin.add_run(base_sha, created_at=datetime.now(timezone.utc) - timedelta(hours=2))
        standin.add_artifact(run_id, build_zip({"ci-eval-run.json": base.read_bytes()}))
        jobs = iter(range(10**6))

        def one(i, patch):
            standin.clear_comments()
            env = bench_action._job_env(standin, folder, folder / f"job{next(jobs)}", base_sha, head_sha)
            env["USER_SHAPED_SIDE"] = "head"
            timed = _timed(_argv(patch, ["action"]), folder, env)
            if not standin.comments_on(7):
                raise RuntimeError("the action posted no comment")
            return timed

        return _alternated(f"action {questions:,}", _variants("action"), one, repeat)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=1_000, help="0: no small check or action")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="check,action,run,compare,evaluate")
    parser.add_argument("--busy", type=int, default=0, metavar="N",
                        help="N spinning processes beside the measurements (default 0)")
    parser.add_argument("--mechanisms", help="only these, comma-separated (default: every one present)")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    if args.mechanisms:
        chosen = set(args.mechanisms.split(","))
        for name in set(OFF) - chosen:
            del OFF[name]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ci_eval")], check=True)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="ci-eval-mechanisms-") as tmp, busy(args.busy):
        tmp = Path(tmp)
        if "check" in only and args.small:
            rows += bench_check(tmp / "check", args.small, args.repeat)
        if "action" in only:
            if args.small:
                rows += bench_action(tmp / "action-small", args.small, args.repeat)
            rows += bench_action(tmp / "action-large", args.questions, args.repeat)
        if only & {"run", "compare"}:
            base, head = _project(tmp / "pair", args.questions)
            if "run" in only:
                rows += bench_run(tmp / "pair", args.repeat)
            if "compare" in only:
                rows += bench_compare(tmp / "pair", base, head, args.repeat)
        if "evaluate" in only:
            rows += bench_evaluate(tmp / "trec", args.repeat)
    print(f"load average at end: {os.getloadavg()}")
    print(f"\n{'command':<24}{'switched off':<24}{'wall s':>8}{'CPU s':>8}{'wall off/on':>13}"
          f"{'paired':>8}{'CPU off/on':>12}")
    for row in rows:
        print(f"{row['command']:<24}{row['variant']:<24}{row['wall_s']:>8.2f}{row['cpu_s']:>8.2f}"
              f"{row['wall_off_on']:>13.2f}{row['wall_paired']:>8.2f}{row['cpu_off_on']:>12.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
