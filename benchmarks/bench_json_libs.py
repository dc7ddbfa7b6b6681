"""Reading and writing a run artefact: ci-eval's reader (msgspec) and writer against json and orjson.

    python benchmarks/bench_json_libs.py                          # 10,000 and 100,000 questions
    python benchmarks/bench_json_libs.py --scale 100000 --repeat 5 --before 014dc10
    python benchmarks/bench_json_libs.py --keep /tmp/arts --profile

Needs ``pip install orjson`` (not a dependency of ci-eval; msgspec is). For each scale a
project is made (an instant python retriever, 15 results a question from an index of 5,000
chunk ids, half the questions scored like a dense retriever's cosine, half like a
reranker's probabilities, whose tail reaches below 1e-4), and `ci-eval run` writes a base
and a head artefact with the project's own writer (the head's retriever differs on a tenth
of the questions). Generating them is timed once, not compared.

Reading the head artefact, wall and CPU seconds, the cycle collector paused alike for every
reader:

- ``ci-eval read_run``: inputs/artefact_file.read_run, what `compare` reads each artefact
  with (every schema and meaning check, typed into columns; each piece of rows decoded by
  msgspec into the row's types, inputs/typed_rows.py);
- ``json.loads``, ``orjson.loads``, ``msgspec decode``: the file's bytes to Python values;
- ``msgspec typed``: the whole file decoded into Structs (a row an ``array_like`` Struct of
  typed_rows.ROW_TYPES), with no meaning check and no columns: held whole, a ranking and all;
- ``read_pair``: both artefacts as `compare` reads them (the base in a forked child, whose
  CPU is counted), against read_run of one after the other;
- read_run's fast path step by step over pieces cut as it cuts them (the piece's bytes,
  msgspec's decode and the checks types cannot say, the columns), with json's and orjson's
  parse of the same pieces beside it;
- peak RSS of a fresh process reading the file with each reader (``none``: imports only).

`ci-eval compare BASE HEAD --no-config` as a whole process: as `python -m ci_eval`, through
this script (the same imports as the other readers), and, with ``--before REV``, with the
``ci_eval`` folder of that revision (exported with ``git archive``): the reader before a
change against this tree's, whose `--format json` output is first checked to be the same.

Writing the whole artefact's bytes in memory: ci-eval's writer
(core/artefact/artefact_writer.artefact_pieces, checked first to reproduce the file `run`
wrote byte for byte) against orjson.dumps in the same layout, and an exact orjson variant
(a row holding a float orjson writes otherwise goes through json's encoder); then whether
orjson's bytes are ci-eval's, and how many float texts differ from ``repr``.

Each measured group alternates within one process, in a rotated order, ``--repeat`` times
(a shared machine's load falls on all alike); medians and each ratio's median are printed,
with the load average before and after. ``--profile`` (with ``--keep``) runs `ci-eval
compare BASE HEAD` under cProfile (``ci_eval.cli.main`` called in this process, once as it
reads and once with base and head read one after the other: the forked child is not
profiled) and prints the share of its wall time spent decoding JSON.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

try:
    import orjson
except ImportError:  # pragma: no cover - a benchmark's own requirement
    raise SystemExit("needs orjson: pip install orjson") from None

import msgspec  # noqa: E402 - ci-eval's dependency

from ci_eval.core.artefact.artefact_writer import END_KEYS, artefact_pieces  # noqa: E402
from ci_eval.inputs.typed_rows import ROW_TYPES  # noqa: E402

CHUNKS = 5000

RETRIEVER = textwrap.dedent(
    f"""
    import math, os, random
    IDS = [f"doc{{j:04d}}/c{{j % 9}}" for j in range({CHUNKS})]
    HEAD = os.environ.get("BENCH_JSON_SIDE") == "head"

    def search(question, k):
        n = int(question.rsplit(" ", 1)[1])
        rng = random.Random(n * 2 + (1 if HEAD and n % 10 == 0 else 0))
        picks = rng.sample(range({CHUNKS}), k + 1)
        gold = n % {CHUNKS}
        picks = [p for p in picks if p != gold][:k]
        if rng.random() < 0.85:  # the gold chunk somewhere in the ranking
            picks[min(int(rng.expovariate(0.6)), k - 1)] = gold
        if n % 2:  # a dense retriever's cosine similarities
            scores = sorted((rng.uniform(0.2, 0.9) for _ in picks), reverse=True)
        else:  # a reranker's probabilities
            scores = sorted((1 / (1 + math.exp(-rng.uniform(-14, 6))) for _ in picks), reverse=True)
        return [(IDS[p], s) for p, s in zip(picks, scores)]
    """
)


def _project(root: Path, questions: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "bench_json_retriever.py").write_text(RETRIEVER)
    ids = [f"doc{j:04d}/c{j % 9}" for j in range(CHUNKS)]
    rows = []
    for i in range(questions):
        gold = [ids[i % CHUNKS]] + ([ids[(i * 7 + 1) % CHUNKS]] if i % 3 == 0 else [])
        rows.append({"id": f"q{i:07d}", "question": f"How is feature {i % 977} configured, case {i}",
                     "gold": gold, "tags": [f"area-{i % 6}"]})
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": rows}))
    (root / "index.json").write_text(json.dumps({"version": "v1", "ids": ids}))
    (root / "ci-eval.toml").write_text(
        'gold_set = "gold.json"\nk = 5\n[retriever]\ntype = "python"\n'
        'target = "bench_json_retriever:search"\nconcurrency = 4\n[index]\nmanifest = "index.json"\n')
    return root


def _run(root: Path, side: str) -> tuple[Path, float]:
    """`ci-eval run` writing ``side``.json; its path and wall seconds."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO)]), "BENCH_JSON_SIDE": side}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ci_eval", "run", "--quiet", "--out", f"{side}.json"],
                   cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)
    return root / f"{side}.json", time.perf_counter() - start


# --------------------------------------------------------------------------- msgspec types
# The whole file into Structs: a row an array_like Struct of the reader's own row types; the
# other top-level keys (a few hundred bytes) are skipped.
Row = msgspec.defstruct("Row", list(ROW_TYPES.items()), array_like=True)
Doc = msgspec.defstruct("Doc", [("schema_version", int), ("metrics", list[str]), ("k", int),
                                ("questions", list[Row]), ("config", dict, {}), ("summary", dict, {})])
_TYPED = msgspec.json.Decoder(Doc)
_UNTYPED = msgspec.json.Decoder()


# --------------------------------------------------------------------------- readers
def _read_ci_eval(path: Path):
    from ci_eval.inputs.artefact_file import read_run

    return read_run(path)


def _read_json(path: Path):
    return json.loads(path.read_bytes().decode("utf-8"))


def _read_orjson(path: Path):
    return orjson.loads(path.read_bytes())


def _read_msgspec(path: Path):
    return _UNTYPED.decode(path.read_bytes())


def _read_msgspec_typed(path: Path):
    return _TYPED.decode(path.read_bytes())


READERS = {"ci-eval read_run": _read_ci_eval, "json.loads": _read_json, "orjson.loads": _read_orjson,
           "msgspec decode": _read_msgspec, "msgspec typed": _read_msgspec_typed}


def _timed(call, *args) -> tuple[float, float]:
    """(wall, CPU) seconds of ``call(*args)``, the cycle collector paused alike for every reader,
    children's CPU counted (read_pair forks); the result freed outside the timing."""
    gc.collect()
    gc.disable()
    try:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu, wall = time.process_time(), time.perf_counter()
        result = call(*args)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu += (after.ru_utime + after.ru_stime) - (kids.ru_utime + kids.ru_stime)
    finally:
        gc.enable()
    del result
    gc.collect()
    return wall, cpu


def _read_pair(base: Path, head: Path):
    from ci_eval.inputs.paired_read import read_pair

    return read_pair(str(base), str(head))


_OTHER_PARSES = [("json parse", lambda body: json.loads("[" + body.decode("utf-8") + "]")),
                 ("orjson parse", lambda body: orjson.loads(b"[" + body + b"]"))]


def _after_parse(path: Path) -> dict:
    """read_run's fast path a piece of rows at a time (about 32 KB, as it cuts them), each
    step timed on its own over the whole file: a piece's bytes (the surrogate search and the
    cut), msgspec's decode into the row's types with the checks types cannot say, then the
    columns; beside them the same piece parsed by json (as the reader before msgspec parsed
    it) and by orjson."""
    from ci_eval.core.artefact.artefact import add_block, kept_depth, relevance_level
    from ci_eval.core.artefact.question_columns import QuestionColumns
    from ci_eval.core.measure.metric_table import MetricTable
    from ci_eval.inputs import artefact_file as af
    from ci_eval.inputs.typed_rows import decoded_block

    layout = af._Layout((path.read_bytes(),))
    early = af._early(layout.head, str(path))
    metrics, level, depth = tuple(early["metrics"]), relevance_level(early), kept_depth(early)
    pieces = [piece for block in layout.rows() for piece in af._pieces(block)]
    took = dict.fromkeys(("piece bytes", "msgspec decode and checks", "columns", "json parse", "orjson parse"), 0.0)
    clock = time.perf_counter
    gc.collect()
    gc.disable()
    try:
        columns = QuestionColumns(MetricTable(metrics), None)
        for i, piece in enumerate(pieces):
            t0 = clock()
            body = af._piece_bytes(piece, True, True)[0]
            t1 = clock()
            block = decoded_block(body, len(metrics))
            t2 = clock()
            add_block(columns, block, level, depth)
            t3 = clock()
            for name, parse in _OTHER_PARSES[i % 2:] + _OTHER_PARSES[:i % 2]:  # in either order
                start = clock()
                parse(body)
                took[name] += clock() - start
            took["piece bytes"] += t1 - t0
            took["msgspec decode and checks"] += t2 - t1
            took["columns"] += t3 - t2
            del block
        start = clock()
        columns.table.finish()
        took["columns"] += clock() - start
    finally:
        gc.enable()
    del pieces, columns
    gc.collect()
    return took


def _compare_argv(tree: Path | None) -> tuple[list[str], dict]:
    """How to run `ci-eval compare` through this script (``--compare-as``, the same imports
    as the readers measured here) with the ``ci_eval`` of ``tree`` (None: this checkout)."""
    env = {**os.environ, "PYTHONPATH": str(tree or REPO)}
    return [sys.executable, __file__, "--compare-as", str(tree or REPO)], env


def _compare_process(base: Path, head: Path, tree: Path | None = None, module: bool = False) -> tuple[float, float]:
    """`ci-eval compare BASE HEAD --no-config`, a whole process: wall and CPU seconds (its
    forked child's included), with the ``ci_eval`` of ``tree``; ``module``: as `python -m
    ci_eval` itself, not through this script."""
    argv, env = _compare_argv(tree)
    if module:
        argv = [sys.executable, "-m", "ci_eval"]
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*argv, "compare", str(base), str(head), "--no-config"],
                          cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr.decode())
    return wall, (after.ru_utime + after.ru_stime) - (kids.ru_utime + kids.ru_stime)


def _compare_output(base: Path, head: Path, tree: Path | None) -> bytes:
    """What `compare BASE HEAD --format json` prints with the ``ci_eval`` of ``tree``."""
    argv, env = _compare_argv(tree)
    return subprocess.run([*argv, "compare", str(base), str(head), "--no-config", "--format", "json"],
                          cwd=REPO, env=env, capture_output=True).stdout


def _compare_as(tree: str, argv: list[str]) -> None:
    """ci-eval's CLI from the ``ci_eval`` folder in ``tree`` (ahead of this checkout's)."""
    sys.path.insert(0, tree)
    for name in [m for m in sys.modules if m == "ci_eval" or m.startswith("ci_eval.")]:
        del sys.modules[name]  # this script imported the checkout's writer and row types
    from ci_eval import cli

    code = cli.main(argv)
    sys.stdout.flush()
    os._exit(code)


def _export(rev: str, into: Path) -> Path:
    """The ``ci_eval`` folder of revision ``rev`` under ``into``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "ci_eval"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


# Runs one command and prints its peak RSS in MB (its own: a fresh process's, not this one's,
# which a child started from this large process would inherit).
_MEASURE_PEAK = textwrap.dedent(
    """
    import resource, subprocess, sys
    subprocess.run(sys.argv[1:], check=True)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    """
)


def _peak(reader: str, path: Path) -> float:
    """The peak RSS (MB) of a fresh process that imports everything, then reads ``path`` with
    ``reader`` and holds the result (this script's ``--peak``; reader "none": no read)."""
    out = subprocess.run([sys.executable, "-c", _MEASURE_PEAK, sys.executable, __file__, "--peak", reader, str(path)],
                         capture_output=True, text=True, check=True)
    return round(float(out.stdout), 1)


def _peak_child(reader: str, path: Path) -> None:
    import ci_eval.inputs.artefact_file  # noqa: F401 - imported before the read, as by every reader

    if reader != "none":
        gc.disable()
        kept = READERS[reader](path)  # noqa: F841 - held, as a caller holds what it read


# --------------------------------------------------------------------------- writers
def _parts(path: Path) -> tuple[dict, list, dict]:
    """The head keys, rows and end keys of an artefact, as the writer is given them."""
    data = json.loads(path.read_bytes())
    head = {k: v for k, v in data.items() if k not in END_KEYS | {"questions", "question_fields"}}
    return head, data["questions"], {k: v for k, v in data.items() if k in END_KEYS}


def _write_ci_eval(head: dict, rows: list, end: dict) -> bytes:
    return b"".join(piece.encode("utf-8") for piece in artefact_pieces(head, rows, lambda: end))


def _write_orjson(head: dict, rows: list, end: dict, row_text=None) -> bytes:
    """The writer's layout (core/artefact/artefact_writer.py) by orjson: keys sorted, one row
    a line (``row_text``: each row's bytes, by default ``orjson.dumps``)."""
    from ci_eval.core.artefact.question_row import QUESTION_FIELDS

    dumps, sort = orjson.dumps, orjson.OPT_SORT_KEYS

    def lines(values: dict, last: bool) -> list[bytes]:
        keys = sorted(values)
        return [b" " + dumps(key) + b": " + dumps(values[key], option=sort)
                + (b"" if last and i == len(keys) - 1 else b",") + b"\n" for i, key in enumerate(keys)]

    out = [b"{\n", *lines({**head, "question_fields": list(QUESTION_FIELDS)}, last=False), b' "questions": [']
    if rows:
        out.append(b"\n  " + b",\n  ".join(map(row_text or dumps, rows)))
    out.append(b"\n ],\n" if end else b"\n ]\n")
    out += lines(end, last=True)
    out.append(b"}\n")
    return b"".join(out)


def _row_floats_differ(row: list) -> bool:
    """Whether a row holds a float orjson writes other than ``repr`` does: 1e-9 <= |x| < 1e-4
    (orjson 3.13 writes ``1e-7`` for ``1e-07`` and ``0.000015`` for ``1.5e-05``; the digits
    are the same). The row's numbers are the metric values, top score, latency, judged@k
    and the ranking's scores."""
    from ci_eval.core.artefact.question_row import FIELD

    numbers = [score for _, score in row[FIELD["ranking"]]]
    numbers += row[FIELD["metrics"]]
    numbers += (row[FIELD["top_score"]], row[FIELD["latency_ms"]], row[FIELD["judged_at_k"]])
    return any(type(x) is float and 1e-9 <= abs(x) < 1e-4 for x in numbers)


def _write_orjson_exact(head: dict, rows: list, end: dict) -> bytes:
    """``_write_orjson`` made byte-identical to ci-eval's writer: a row holding a float that
    orjson writes differently is written by json's encoder, as ci-eval writes it."""
    from ci_eval.core.artefact.artefact_writer import _ENCODE_ROWS

    dumps = orjson.dumps

    def row_text(row: list) -> bytes:
        return _ENCODE_ROWS(row).encode("utf-8") if _row_floats_differ(row) else dumps(row)

    return _write_orjson(head, rows, end, row_text)


def _floats(value, out: list) -> None:
    if type(value) is float:
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _floats(v, out)
    elif isinstance(value, list):
        for v in value:
            _floats(v, out)


def float_texts(head: dict, rows: list, end: dict) -> dict:
    """Every float of the artefact: how many, how many orjson writes other than ``repr``."""
    found: list = []
    _floats([head, rows, end], found)
    differ = [x for x in found if orjson.dumps(x).decode() != repr(x)]
    examples = sorted(set(differ))[:3]
    return {"floats": len(found), "differing": len(differ), "distinct_differing": len(set(differ)),
            "examples": [f"{x!r} -> {orjson.dumps(x).decode()}" for x in examples]}


# --------------------------------------------------------------------------- measuring
def _alternate(calls: dict, repeat: int) -> dict[str, list[tuple[float, float]]]:
    """Each of ``calls`` (name -> (function, args)) ``repeat`` times, in a rotated order."""
    names, runs = list(calls), {name: [] for name in calls}
    for r in range(repeat):
        for name in names[r % len(names):] + names[: r % len(names)]:
            call, args = calls[name]
            runs[name].append(_timed(call, *args))
    return runs


def _summary(runs: dict, reference: str) -> dict:
    ref = runs[reference]
    out = {}
    for name, got in runs.items():
        out[name] = {
            "wall_s": round(statistics.median(w for w, _ in got), 3),
            "cpu_s": round(statistics.median(c for _, c in got), 3),
            f"wall_over_{reference}": round(statistics.median(w / rw for (w, _), (rw, _) in zip(got, ref)), 3),
            f"cpu_over_{reference}": round(statistics.median(c / rc for (_, c), (_, rc) in zip(got, ref)), 3),
        }
    return out


def _identity(parts: tuple, written: bytes) -> dict:
    """orjson's artefact against ci-eval's: byte-identical or not, lines and floats differing,
    and whether the exact variant is byte-identical."""
    by_orjson = _write_orjson(*parts)
    lines_a, lines_b = written.split(b"\n"), by_orjson.split(b"\n")
    differing = sum(a != b for a, b in zip(lines_a, lines_b)) + abs(len(lines_a) - len(lines_b))
    return {"byte_identical": written == by_orjson, "bytes": [len(written), len(by_orjson)],
            "lines_differing": differing, "lines": len(lines_a), **float_texts(*parts),
            "exact_variant_identical": _write_orjson_exact(*parts) == written}


def _compares(base: Path, head: Path, repeat: int, before: Path | None) -> dict:
    """`compare` through this script, and as `python -m ci_eval` or, given ``before``, with
    that tree's reader (its `--format json` output first held to this tree's), each ratio
    over the other."""
    ours = "compare, ci-eval's reader"
    calls = {ours: (_compare_process, (base, head))}
    if before is None:
        calls["python -m ci_eval compare"] = (_compare_process, (base, head, None, True))
        return {"compare": _summary(_alternate(calls, repeat), ours)}
    same = _compare_output(base, head, before) == _compare_output(base, head, None)
    calls["compare, the reader before"] = (_compare_process, (base, head, before))
    return {"compare": _summary(_alternate(calls, repeat), "compare, the reader before"),
            "before_report_identical": same}


def measure(questions: int, repeat: int, keep: Path | None, before: Path | None = None,
            compare_only: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-json-") as tmp:
        root = _project((keep or Path(tmp)) / f"p{questions}", questions)
        base, base_s = _run(root, "base")
        head, head_s = _run(root, "head")
        print(f"{questions:,} questions: `ci-eval run` {base_s:.1f} s and {head_s:.1f} s, "
              f"{base.stat().st_size / 1e6:.1f} MB and {head.stat().st_size / 1e6:.1f} MB", flush=True)
        result = {"questions": questions, "artefact_mb": round(head.stat().st_size / 1e6, 1),
                  "run_s": [round(base_s, 2), round(head_s, 2)], **_compares(base, head, repeat, before)}
        if keep:
            result["artefacts"] = [str(base), str(head)]
        if compare_only:
            return result
        parts = _parts(head)
        written = _write_ci_eval(*parts)
        if written != head.read_bytes():
            raise SystemExit("the writer's pieces do not reproduce the artefact `run` wrote")
        identity = _identity(parts, written)
        del written
        reads = _alternate({name: (call, (head,)) for name, call in READERS.items()}, repeat)
        pair = _alternate({"read_pair (base + head)": (_read_pair, (base, head)),
                           "read_run base, then head": (lambda b, h: (_read_ci_eval(b), _read_ci_eval(h)),
                                                        (base, head))}, repeat)
        steps = [_after_parse(head) for _ in range(repeat)]
        writes = _alternate({"ci-eval writer": (_write_ci_eval, parts), "orjson.dumps": (_write_orjson, parts),
                             "orjson.dumps exact": (_write_orjson_exact, parts)}, repeat)
        return {
            **result,
            "read": _summary(reads, "ci-eval read_run"),
            "read_both": _summary(pair, "read_pair (base + head)"),
            "read_run_steps_s": {k: round(statistics.median(a[k] for a in steps), 3) for k in steps[0]},
            "peak_mb": {name: _peak(name, head) for name in ("none", *READERS)},
            "write": _summary(writes, "ci-eval writer"),
            "orjson_output": identity,
        }


# --------------------------------------------------------------------------- profile
def _json_parse(filename: str, name: str) -> bool:
    """Whether a profiled function's own time is JSON decoding: json's loads and decoder (whose
    own time holds the C scanner's: cProfile does not see it apart), bytes' UTF-8 decode and
    msgspec's decoder (the rows)."""
    return filename.replace("\\", "/").endswith(("json/__init__.py", "json/decoder.py")) or name in (
        "<method 'decode' of 'bytes' objects>", "<method 'decode' of 'msgspec.json.Decoder' objects>")


def profile_compare(base: Path, head: Path) -> dict:
    """`ci-eval compare BASE HEAD` under cProfile in this process; the share of its wall
    time inside JSON parsing."""
    from ci_eval import cli

    out = open(os.devnull, "w")  # noqa: SIM115 - the report is printed to it
    stdout, sys.stdout = sys.stdout, out
    profiler = cProfile.Profile()
    try:
        start = time.perf_counter()
        code = profiler.runcall(cli.main, ["compare", str(base), str(head), "--no-config"])
        wall = time.perf_counter() - start
    finally:
        sys.stdout = stdout
        out.close()
    stats = pstats.Stats(profiler)
    parse = read = 0.0
    for (filename, _line, name), (_cc, _nc, tottime, cumtime, _callers) in stats.stats.items():
        if _json_parse(filename, name):
            parse += tottime
        if name == "read_pair":
            read = max(read, cumtime)
    return {"exit": code, "wall_s": round(wall, 2), "json_parse_s": round(parse, 2),
            "json_share": round(parse / wall, 3), "read_pair_s": round(read, 2),
            "read_share": round(read / wall, 3)}


def main() -> None:
    if sys.argv[1:2] == ["--compare-as"]:  # the rest is ci-eval's own argv
        _compare_as(sys.argv[2], sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="10000,100000", help="comma-separated question counts")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, metavar="DIR", help="make the projects and artefacts here, kept")
    parser.add_argument("--profile", action="store_true", help="profile `ci-eval compare` on each scale's pair")
    parser.add_argument("--before", metavar="REV", help="also run `compare` with the reader of this git revision")
    parser.add_argument("--compare-only", action="store_true", help="measure `compare` alone, not each reader")
    parser.add_argument("--peak", nargs=2, metavar=("READER", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak:
        _peak_child(args.peak[0], Path(args.peak[1]))
        return
    print(f"load average at start: {os.getloadavg()} on {os.cpu_count()} cpus; python {sys.version.split()[0]}, "
          f"orjson {orjson.__version__}, msgspec {msgspec.__version__}", flush=True)
    if args.profile and not args.keep:
        raise SystemExit("--profile needs --keep DIR (the artefacts are profiled after they are measured)")
    with tempfile.TemporaryDirectory(prefix="bench-json-before-") as tmp:
        before = _export(args.before, Path(tmp)) if args.before else None
        for n in map(int, args.scale.split(",")):
            result = measure(n, args.repeat, args.keep, before, args.compare_only)
            if args.profile:
                base, head = map(Path, result["artefacts"])
                result["compare_profile"] = [profile_compare(base, head)]
            print(json.dumps(result, indent=1), flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
