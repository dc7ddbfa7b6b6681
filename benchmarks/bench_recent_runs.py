"""A branch's window of recent runs (ci-eval-questions.json): its bytes, time to extend, write and read it, peak RSS.

    python benchmarks/bench_recent_runs.py                        # 1,000 and 100,000 questions
    python benchmarks/bench_recent_runs.py --scale 100000 --ids long

For each question count and id length, 30 run artefacts are written first by the writer's
own pieces (tests/support/v2_files.py, as benchmarks/bench_history.py does; not timed).
Ids are `q000123` (short) or 40 characters (long). Of every 20 questions 16 are steady, one
breaks at run 16, one misses every third run, one joins the gold set at run 10 and one is
fixed at run 20, so the states are not all alike; each question has one of 8 tags.

Then a fresh process does what each push run of the action does: reads the run artefact
(read_run), extends the window the previous run stored (extend), writes it (write_recent),
and the next run reads that file back (json.loads, read_recent). It reports the file's bytes
at 30 runs, the median of 5 timings of the last run's steps (the window full), and its own
peak RSS beside the RSS once the first artefact is read (the head artefact every run holds
anyway): the difference is the window's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))
sys.path.insert(0, str(REPO / "benchmarks"))

RUNS = 30


def question_id(q: int, ids: str) -> str:
    return f"q{q:06d}" if ids == "short" else f"faq/account-and-billing/question-{q:07d}"


def write_branch(folder: Path, questions: int, ids: str) -> int:
    """RUNS artefacts of ``questions`` questions; their total bytes."""
    from bench_history import _fast_questions
    from factories import ranked_with_gold_at, spec
    from v2_files import write_v2

    _fast_questions()  # one derivation per (rank, tags): 100,000 rows cost 40, not 100,000
    total = 0
    for r in range(RUNS):
        specs = []
        for q in range(questions):
            kind, base = q % 20, 1 + (q * 7) % 4
            if kind == 18 and r < 10:
                continue  # not yet in the gold set
            missed = (kind == 16 and r >= 16) or (kind == 17 and r % 3 == 1) or (kind == 19 and r < 20)
            specs.append(spec(question_id(q, ids), gold=["g"], ranking=ranked_with_gold_at(None if missed else base),
                              tags=[f"t{q % 8}"]))
        path = folder / f"run-{r:02d}.json"
        write_v2(path, specs, sha=f"{r + 1:040x}", created_at=f"2026-11-{1 + r // 24:02d}T{r % 24:02d}:00:00Z")
        total += path.stat().st_size
    return total


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def _timed(repeats: int, call, *args):
    """``call(*args)`` and its median time over ``repeats`` calls (one result alive at a time)."""
    times, value = [], None
    for _ in range(repeats):
        value = None
        start = time.perf_counter()
        value = call(*args)
        times.append(time.perf_counter() - start)
    return value, statistics.median(times)


def _serialised(recent) -> bytes:
    # write_recent's own serialisation, timed apart from its extend; measure checks these
    # bytes against the file write_recent writes
    return (json.dumps(recent.as_json(), ensure_ascii=False, separators=(",", ":")) + "\n").encode(
        "utf-8", "surrogatepass")


def _read_back(raw: bytes):
    from ci_eval.core.compare.recent_runs import read_recent

    return read_recent(json.loads(raw))  # as _stored_recent reads the stored file


def measure(folder: Path, repeats: int = 5) -> dict:
    """The action's steps over the runs in ``folder``, run by run (in this process), holding
    what a push run holds: the stored file's bytes, the window read from them, its own
    artefact, the new window and its text. The last run's steps are timed ``repeats`` times."""
    from ci_eval.core.compare.recent_runs import extend, gold_prints
    from ci_eval.github.artifact_zip import MAX_QUESTIONS_BYTES, QUESTIONS_MEMBER
    from ci_eval.github.steps import write_recent
    from ci_eval.inputs.artefact_file import read_run

    load_before = os.getloadavg()
    out = folder / "out"
    out.mkdir()
    stored = out / QUESTIONS_MEMBER
    paths = sorted(folder.glob("run-*.json"))
    stored_bytes, rss_head, kept, prints = None, None, True, None
    for n, path in enumerate(paths):
        repeat = repeats if n == len(paths) - 1 else 1
        previous = None if stored_bytes is None else _read_back(stored_bytes)  # the previous run's file
        head = read_run(path)  # as the action reads its own run back
        rss_head = rss_head or _rss_mb()
        recent, extend_s = _timed(repeat, extend, previous, head, prints)  # prints: the previous run's gold
        data, serialise_s = _timed(repeat, _serialised, recent)
        runs, questions, digest = len(recent.runs), len(recent.states), hashlib.sha256(data).digest()
        # what was timed is let go before write_recent builds its own, so the peak is a run's
        over_cap = len(data) > MAX_QUESTIONS_BYTES
        stored_bytes = data if over_cap else None
        del recent, data
        stored.unlink(missing_ok=True)  # each job starts with an empty output folder
        write_recent(out, previous, head, prints)
        prints = gold_prints(head)  # what the next push run reads of this one
        if over_cap:
            kept = False  # the action would start over; the bytes are still counted
            assert not stored.exists()
        else:
            stored_bytes = stored.read_bytes()
            assert hashlib.sha256(stored_bytes).digest() == digest, "write_recent serialises otherwise"
        del previous, head
    _, read_s = _timed(repeats, _read_back, stored_bytes)  # what the next run reads
    return {"runs": runs, "questions": questions, "bytes": len(stored_bytes),
            "bytes_per_question": round(len(stored_bytes) / questions, 1), "cap_bytes": MAX_QUESTIONS_BYTES,
            "kept": kept, "extend_ms": round(extend_s * 1000, 1), "serialise_ms": round(serialise_s * 1000, 1),
            "read_ms": round(read_s * 1000, 1), "rss_head_mb": round(rss_head, 1), "peak_rss_mb": round(_rss_mb(), 1),
            "load": [round(x, 2) for x in (*load_before, *os.getloadavg())]}


def _child(*args: str) -> str:
    """The last line a fresh process of this script printed."""
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=REPO)
    if done.returncode:
        raise SystemExit(done.stderr)
    return done.stdout.splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="1000,100000", help="comma-separated question counts (default 1000,100000)")
    parser.add_argument("--ids", default="short,long", help="comma-separated id lengths: short, long")
    parser.add_argument("--write", nargs=3, help=argparse.SUPPRESS)  # a process: FOLDER QUESTIONS IDS
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # a process: a folder of runs
    args = parser.parse_args()
    if args.write:
        print(write_branch(Path(args.write[0]), int(args.write[1]), args.write[2]))
        return
    if args.measure:
        print(json.dumps(measure(Path(args.measure))))
        return
    rows = []
    for questions in map(int, args.scale.split(",")):
        for ids in args.ids.split(","):
            with tempfile.TemporaryDirectory(prefix="bench-recent-") as tmp:
                # Each step its own process started from this small one: a child's ru_maxrss
                # starts from its parent's RSS at the fork, so writing the runs here would
                # count their hundreds of MB in the measured peak.
                artefacts = int(_child("--write", tmp, str(questions), ids))
                row = {"ids": ids, "id_chars": len(question_id(0, ids)), "artefact_mb": round(artefacts / 1e6, 1),
                       **json.loads(_child("--measure", tmp))}
                rows.append(row)
                print(json.dumps(row), flush=True)
    print("| questions | ids | runs | file | bytes a question | under the cap | extend | serialise | read back "
          "| RSS with one artefact | peak RSS | load (1, 5, 15 min) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['questions']:,} | {r['id_chars']} chars | {r['runs']} | {r['bytes']:,} B | "
              f"{r['bytes_per_question']} | {'yes' if r['bytes'] <= r['cap_bytes'] else 'no'} | {r['extend_ms']} ms | "
              f"{r['serialise_ms']} ms | {r['read_ms']} ms | {r['rss_head_mb']:,.0f} MB | {r['peak_rss_mb']:,.0f} MB | "
              f"{', '.join(map(str, r['load'][3:]))} |")


if __name__ == "__main__":
    main()
