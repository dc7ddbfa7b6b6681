"""`ci-eval run` and `ci-eval compare` at 1,000 / 10,000 / 100,000 questions.

    python benchmarks/bench_scale.py [--sizes 1000,10000,100000] [--before REV] [--stages N,...] [--keep DIR] [--bytecode]

A gold set of N questions (one in ten unanswerable, tagged) is run twice through the real
CLI with an instant python retriever (answers precomputed, so the time is ci-eval's own):
a base whose gold chunk sits at rank ``i % 20`` and a head at ``(3 i) % 20``, so questions
regress, improve and fall past depth. Each whole process is timed with its peak memory
(the child's own ru_maxrss, from wait4). ``--stages`` also times compare's stages in one
process at those sizes, in CPU seconds: read (version 1: parse, validate, typed read),
diff, gate, judged@k, the budgeted comment, the full comment, the JSON report. ``--before
REV`` times ci-eval at that revision as well, from a temporary git worktree, on the same
project. "now" compares version 2 artefacts: while
`run` writes version 1, its artefacts are converted row by row with
``core.question_row.to_row`` (the same facts; the comment is the same); "before" compares
the version 1 artefacts it reads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_evaluate import _worktree  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

_RETRIEVER = textwrap.dedent(
    """
    import os
    SHIFT = int(os.environ["BENCH_SHIFT"])
    N = int(os.environ["BENCH_N"])
    _cache = {}

    def retrieve(question, depth):
        i = int(question.rsplit(" ", 1)[1])
        rank = (SHIFT * i) % 20
        ids = [f"c{(i + 1 + j) % N}" for j in range(depth)]
        if rank < depth:
            ids[rank] = f"c{i}"
        return [(cid, 1.0 / (r + 1)) for r, cid in enumerate(ids)]
    """
)

# compare's stages timed in one process. The start differs by version: version 1 (the
# "before") is parsed, checked and typed in three stages and judged@k reads the checked
# dicts; version 2 is read in one pass (parse, check, type a row at a time).
_STAGES_START = textwrap.dedent(
    """
    import json, sys, time
    t = time.process_time  # CPU seconds: on a shared machine wall time is the others' load
    out = {}
    def stage(name, fn):
        start = t(); value = fn(); out[name] = out.get(name, 0.0) + t() - start; return value
    """
)
_READ_V1 = textwrap.dedent(
    """
    from ci_eval.inputs.files import read_json
    from ci_eval.inputs.loaders import _checked_artefact
    from ci_eval.core.artefact.artefact import read_artefact
    raw = [stage("read JSON", lambda p=p: read_json(p, "run artefact", 2**27)[0]) for p in sys.argv[1:3]]
    checked = [stage("validate", lambda d=d, p=p: _checked_artefact(d, p)) for d, p in zip(raw, sys.argv[1:3])]
    typed = [stage("typed read", lambda d=d: read_artefact(d)) for d in checked]
    judged_inputs = checked
    """
)
_READ_V2 = textwrap.dedent(
    """
    from ci_eval.inputs.artefact_file import read_run
    typed = [stage("read (parse, check, type)", lambda p=p: read_run(p)) for p in sys.argv[1:3]]
    judged_inputs = typed
    """
)
_STAGES_END = textwrap.dedent(
    """
    from ci_eval.core.compare.diff import diff
    from ci_eval.report import BaselineInfo, policy_from
    from ci_eval.core.compare.gate import evaluate_gate
    from ci_eval.core.report.render import render_markdown
    from ci_eval.core.report.render_json import render_json
    from ci_eval.core.report.render_context import ReportContext
    from ci_eval.core.compare.judged import judged_report
    d = stage("diff", lambda: diff(typed[0], typed[1]))
    def regression_ids(d):  # as report.build_report passes them, at either revision
        ids = getattr(d.regressions, "ids", None)
        return ids() if ids else (q.id for q in d.regressions)
    policy = policy_from({}, [], [])
    gate = stage("gate", lambda: evaluate_gate(policy, d))
    ctx = stage("judged", lambda: ReportContext(d, gate, BaselineInfo(kind="file"), "", "",
                judged_report(*judged_inputs, regression_ids(d)), "", None))
    stage("budgeted comment", lambda: render_markdown(ctx))
    stage("full comment", lambda: render_markdown(ctx, None))
    stage("JSON report", lambda: render_json(ctx))
    print(json.dumps(out))
    """
)
STAGES = {1: _STAGES_START + _READ_V1 + _STAGES_END, 2: _STAGES_START + _READ_V2 + _STAGES_END}


def to_version_2(path: Path, out: Path) -> None:
    """The version 2 artefact of a version 1 one, in the writer's line layout: each question
    line turned into its row (core/artefact/question_row.to_row), a line at a time (a 1,000,000-question
    artefact is not loaded whole), the other keys as they were."""
    from ci_eval.core.artefact.question_row import QUESTION_FIELDS, to_row

    def compact(value) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    header = json.loads(_first_lines(path))
    metrics = header["metrics"]
    tmp = out.with_suffix(".v2.tmp")
    with path.open(encoding="utf-8") as src, tmp.open("w", encoding="utf-8") as dst:
        for line in src:
            if line.startswith(' "questions"'):  # keys stay sorted, as the writer has them
                line = f' "question_fields": {compact(list(QUESTION_FIELDS))},\n{line}'
            elif line.startswith(' "schema_version"'):
                line = ' "schema_version": 2,\n'
            elif line.startswith("  {"):
                body = line.strip().rstrip(",")
                comma = "," if line.rstrip().endswith(",") else ""
                line = f"  {compact(to_row(json.loads(body), metrics))}{comma}\n"
            dst.write(line)
    tmp.replace(out)


def _measure(cmd, cwd, env) -> dict:
    """Wall time and the child's own peak RSS of one whole process."""
    # Output goes to files: a pipe nobody reads during wait4 would fill and stall the child.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        # wait4 gives this child's rusage alone; RUSAGE_CHILDREN would keep the largest so far.
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    code = proc.returncode
    if code not in (0, 1):
        raise RuntimeError(f"{cmd} exited {code}: {stderr.decode()[-500:]}")
    # CPU time as well: on a shared machine the wall time is mostly the others' load
    cpu = usage.ru_utime + usage.ru_stime
    return {"seconds": round(seconds, 2), "cpu_s": round(cpu, 2), "peak_mb": round(usage.ru_maxrss / 1024),
            "stdout": stdout}


def _env(code: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = f"{code}{os.pathsep}."
    env.update(extra)
    return env


def make_project(folder: Path, n: int, long_ids: bool = False) -> None:
    """The gold set, config and retriever of one size; with ``long_ids`` every sixth
    question id is 200 characters long (what ids from paths and headings come to)."""
    questions = []
    for i in range(n):
        tag = [f"t{i % 7}"]
        qid = f"q{i}".rjust(200, "x") if long_ids and i % 6 == 0 else f"q{i}"
        if i % 10 == 9:
            questions.append({"id": qid, "question": f"question {i}", "gold": [],
                              "unanswerable": True, "tags": tag})
        else:
            questions.append({"id": qid, "question": f"question {i}", "gold": [f"c{i}"], "tags": tag})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": questions}))
    (folder / "bench_retriever.py").write_text(_RETRIEVER)
    (folder / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 5\n[retriever]\n'
                                         'type = "python"\ntarget = "bench_retriever:retrieve"\n')


# run and compare with the artefact size limit lifted in their own process: a 1,000,000-question
# artefact is past it (run refuses before retrieval, compare refuses to read), and the figures
# are of the work.
_LIFTED = ("import sys; import ci_eval.inputs.loaders as loaders; loaders.MAX_ARTEFACT_BYTES = 1 << 40; "
           "from ci_eval.cli import main; sys.exit(main({}))")
_COMPARE = _LIFTED.format("['compare', 'base.json', 'head.json']")


def one_size(folder: Path, n: int, code: Path, stages: bool, version: int) -> dict:
    """``version``: which artefact version compare reads (2: the run's artefacts converted).
    Artefacts already in ``folder`` (``--keep``, or the other revision's) are compared as
    they are, without running again."""
    py = sys.executable
    figures = {}
    for side, shift in (("base", 1), ("head", 3)):
        if (folder / f"{side}.json").exists():
            continue
        env = _env(code, BENCH_SHIFT=str(shift), BENCH_N=str(n))
        run = _LIFTED.format(repr(["run", "--quiet", "--out", f"{side}.json"]))
        m = _measure([py, "-c", run], folder, env)
        figures[f"run {side}"] = {k: v for k, v in m.items() if k != "stdout"}
        # a version 2 artefact names its question fields before its questions
        if version == 2 and "question_fields" not in json.loads(_first_lines(folder / f"{side}.json")):
            to_version_2(folder / f"{side}.json", folder / f"{side}.json")
    figures["artefact MB"] = round((folder / "head.json").stat().st_size / 1e6, 1)
    m = _measure([py, "-c", _COMPARE], folder, _env(code))
    figures["compare"] = {k: v for k, v in m.items() if k != "stdout"}
    if stages:
        m = _measure([py, "-c", STAGES[version], "base.json", "head.json"], folder, _env(code))
        figures["compare stages"] = {k: round(v, 2) for k, v in json.loads(m["stdout"]).items()}
    return figures


def _first_lines(path: Path) -> str:
    """The artefact's keys before its questions, as a JSON object (its version is there)."""
    head = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(' "questions"'):
                break
            head.append(line)
    return "".join(head).rstrip().rstrip(",") + "}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--stages", default="10000,100000", help="sizes at which compare's stages are timed")
    parser.add_argument("--before", metavar="REV", help="also time ci-eval at this git revision "
                        "(on version 1 artefacts, which it reads)")
    parser.add_argument("--before-version", type=int, default=1, choices=(1, 2),
                        help="the artefact version the --before revision reads (default 1)")
    parser.add_argument("--keep", metavar="DIR", help="keep each size's project and artefacts in "
                        "DIR and compare the ones already there instead of running again (a "
                        "1,000,000-question run takes minutes)")
    parser.add_argument("--bytecode", action="store_true", help="compile both trees' modules first, as "
                        "an installed ci-eval has them (else, with PYTHONDONTWRITEBYTECODE set, each "
                        "timed process compiles what it imports)")
    parser.add_argument("--long-ids", action="store_true", help="every sixth question id 200 characters long")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    stage_sizes = {int(s) for s in args.stages.split(",") if s}
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp, _worktree(args.before) as before:
        versions = {"now": ROOT} | ({"before": Path(before)} if before else {})
        if args.bytecode:
            for code in versions.values():
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "ci_eval")], check=True)
        for n in sizes:
            for name, code in versions.items():
                version = args.before_version if name == "before" else 2
                # a revision reading version 2 compares the very files "now" compares
                folder = Path(args.keep or tmp) / f"{'now' if version == 2 else name}-{n}"
                if not (folder / "gold.json").exists():
                    make_project(folder, n, args.long_ids)
                results[f"{n} {name}"] = one_size(folder, n, code, n in stage_sizes, version)
                print(f"{n:>7,} {name:<6} {json.dumps(results[f'{n} {name}'])}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
