"""Reading and writing a run artefact with msgspec and orjson against ci-eval's own JSON code.

    python benchmarks/bench_json_libs.py                          # 10,000 and 100,000 questions
    python benchmarks/bench_json_libs.py --scale 10000 --repeat 3
    python benchmarks/bench_json_libs.py --keep /tmp/arts --profile

Needs ``pip install msgspec orjson`` (neither is a dependency of ci-eval). For each scale a
project is made (an instant python retriever, 15 results a question from an index of 5,000
chunk ids, half the questions scored like a dense retriever's cosine, half like a
reranker's probabilities, whose tail reaches below 1e-4), and `ci-eval run` writes a base
and a head artefact with the project's own writer (the head's retriever differs on a tenth
of the questions). Generating them is timed once, not compared.

Reading the head artefact, wall and CPU seconds, the collector paused as ci-eval's reader
pauses it:

- ``ci-eval read_run``: inputs/artefact_file.read_run, what `compare` reads each artefact
  with (every schema and meaning check, typed into columns);
- ``json.loads``, ``orjson.loads``, ``msgspec decode``: the file's bytes to Python values;
- ``msgspec typed``: decoded into Structs (a row an ``array_like`` Struct of the schema's
  types and bounds): the lower bound of a msgspec reader, which would still need the
  meaning checks msgspec cannot express and ci-eval's columns;
- two prototypes of read_run's fast path, patched in for the read: ``msgspec prototype``
  (each piece of rows decoded into typed tuples, then only the checks msgspec cannot say,
  then the same columns) and ``orjson prototype`` (orjson.loads as the parser, every check
  as it is); each is first held to read_run (the same columns, no full parse) and to the
  same `compare --format json` output;
- ``read_pair``: both artefacts as `compare` reads them (the base in a forked child, whose
  CPU is counted), against read_run of one after the other;
- read_run's fast path step by step over pieces cut as it cuts them (the piece's text,
  json's parse, the block checks, the columns), with orjson's and msgspec's parse of the
  same pieces beside json's;
- peak RSS of a fresh process reading the file with each reader (``none``: imports only).

`ci-eval compare BASE HEAD --no-config` as a whole process: as `python -m ci_eval`, and
through this script with ci-eval's reader, the msgspec prototype and the orjson prototype.

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
profiled) and prints the share of its wall time spent in json's parser.
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
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Annotated, Literal, get_type_hints

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

try:
    import msgspec
    import orjson
except ImportError:  # pragma: no cover - a benchmark's own requirement
    raise SystemExit("needs msgspec and orjson: pip install msgspec orjson") from None

from ci_eval.core.artefact.artefact_writer import END_KEYS, artefact_pieces  # noqa: E402

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
# The question row of schemas/artefact-v2.schema.json as msgspec types, bounds included
# (lengths, the metric range, grades, ranks). What msgspec cannot say (a chunk id named twice
# in one list, one value per metric, unique question ids, the counts, metric names) is not here.
Id = Annotated[str, msgspec.Meta(max_length=1000)]
Short = Annotated[str, msgspec.Meta(max_length=100)]
Long = Annotated[str, msgspec.Meta(max_length=1000)]
Warning_ = Annotated[str, msgspec.Meta(max_length=2000)]
Unit = Annotated[float, msgspec.Meta(ge=0, le=1)]
Grade = Annotated[int, msgspec.Meta(ge=-1000, le=1000)]


class Row(msgspec.Struct, array_like=True):
    id: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    question: Annotated[str, msgspec.Meta(max_length=10_000)]
    tags: Annotated[list[Short], msgspec.Meta(max_length=50)]
    unanswerable: bool
    status: Literal["ok", "stale", "unanswerable", "error"]
    gold: Annotated[list[tuple[Id, Grade]], msgspec.Meta(max_length=1000)]
    stale: Annotated[list[Long], msgspec.Meta(max_length=1000)]
    metrics: Annotated[list[Unit | None], msgspec.Meta(max_length=200)]
    first_gold_rank: Annotated[int, msgspec.Meta(ge=1)] | None
    top_score: float | None
    latency_ms: Annotated[float, msgspec.Meta(ge=0)] | None
    answer_correct: bool | None
    judged_at_k: Unit | None
    error: Annotated[str, msgspec.Meta(max_length=2000)] | None
    warnings: Annotated[list[Warning_], msgspec.Meta(max_length=50)]
    ranking: Annotated[list[tuple[Id, float]], msgspec.Meta(max_length=10_000)]


class Doc(msgspec.Struct):
    """The rows and the keys a reader types; the other top-level keys (a few hundred bytes) are skipped."""

    schema_version: int
    metrics: list[str]
    k: int
    questions: Annotated[list[Row], msgspec.Meta(max_length=1_000_000)]
    config: dict = {}
    summary: dict = {}


_TYPED = msgspec.json.Decoder(Doc)
_UNTYPED = msgspec.json.Decoder()


# --------------------------------------------------------------------------- a msgspec reader
# A prototype of read_run's fast path with msgspec: each piece of rows (cut from the file as
# read_run cuts it) decoded into typed tuples of Row's types and bounds, then only what
# msgspec cannot say checked (the number of metric values; a chunk id twice in a gold or
# ranking list), then the same columns (add_block). Any refusal steps aside to the full
# parse, as read_run's fast path does. Installed by patching inputs/artefact_file for the
# read's duration; the columns it gives are checked against read_run's before it is timed.
_ROW_TUPLES = msgspec.json.Decoder(list[tuple[tuple(get_type_hints(Row, include_extras=True).values())]]).decode
_REFUSED = (msgspec.ValidationError, msgspec.DecodeError)


def _piece_bytes(block: bytes, first: bool, open_comma: bool):
    """``artefact_file._piece_text`` without the UTF-8 decode: msgspec decodes bytes."""
    from ci_eval.inputs.artefact_file import NEEDS_FULL_PARSE

    if NEEDS_FULL_PARSE.search(block) or not (first or open_comma):
        return None
    body = block.rstrip(b"\n")
    comma = body.endswith(b",")
    return (body[:-1] if comma else body), comma


def _unique_pairs(lists):
    """Each list of (chunk id, value) pairs as a dict, their ids and values as flat runs;
    None when a list names a chunk twice."""
    dicts = list(map(dict, lists))
    if sum(map(len, dicts)) != sum(map(len, lists)):
        return None
    return dicts, list(chain.from_iterable(dicts)), list(chain.from_iterable(map(dict.values, dicts)))


def _add_rows_msgspec(columns, body: bytes, metrics: int, level, depth: int) -> bool:
    from ci_eval.core.artefact.artefact import add_block
    from ci_eval.core.artefact.question_row import FIELD
    from ci_eval.core.artefact.row_blocks import RowBlock

    try:
        rows = _ROW_TUPLES(b"[" + body + b"]")
    except _REFUSED:
        return False
    if not rows:
        return False
    fields = list(zip(*rows))
    if not set(map(len, fields[FIELD["metrics"]])) <= {0, metrics}:
        return False
    gold, ranking = _unique_pairs(fields[FIELD["gold"]]), _unique_pairs(fields[FIELD["ranking"]])
    if gold is None or ranking is None:
        return False
    add_block(columns, RowBlock(fields, ranking[0], ranking[1], gold), level, depth)
    return True


# orjson as the parser alone, the rest of read_run as it is: a piece's bytes parsed by
# orjson.loads, then row_blocks' checks. orjson reads an integer past 64 bits as a float
# (json: the exact int); of what a row keeps, only the first gold rank has no bound that
# refuses such a number, so a piece with a float rank that large steps aside.
_FIRST_RANK = 8  # question_row.FIELD["first_gold_rank"]


def _parsed_rows_orjson(body: bytes) -> list | None:
    try:
        rows = orjson.loads(b"[" + body + b"]")
        ranks = [row[_FIRST_RANK] for row in rows]
    except (orjson.JSONDecodeError, TypeError, IndexError, KeyError):
        return None
    if float in set(map(type, ranks)) and max(r for r in ranks if type(r) is float) >= 2.0 ** 63:
        return None
    return rows or None


@contextmanager
def prototype_reader(kind: str):
    """read_run's fast path by the ``kind`` prototype ("msgspec" or "orjson") while inside."""
    from ci_eval.inputs import artefact_file as af

    saved = af._piece_text, af._add_rows, af._parsed_rows
    af._piece_text = _piece_bytes
    if kind == "msgspec":
        af._add_rows = _add_rows_msgspec
    else:
        af._parsed_rows = _parsed_rows_orjson
    try:
        yield
    finally:
        af._piece_text, af._add_rows, af._parsed_rows = saved


def same_read(path: Path, kind: str) -> None:
    """The prototype's artefact is read_run's, field by field, and took no full parse."""
    sys.path.insert(0, str(REPO / "tests" / "support"))
    from v2_files import assert_same_columns

    from ci_eval.inputs import artefact_file as af

    expected = af.read_run(path)
    saved, af._full_parse = af._full_parse, None  # called: a TypeError
    try:
        with prototype_reader(kind):
            got = af.read_run(path)
    finally:
        af._full_parse = saved
    assert_same_columns(expected, got)


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


def _read_msgspec_prototype(path: Path):
    with prototype_reader("msgspec"):
        return _read_ci_eval(path)


def _read_orjson_prototype(path: Path):
    with prototype_reader("orjson"):
        return _read_ci_eval(path)


READERS = {"ci-eval read_run": _read_ci_eval, "json.loads": _read_json, "orjson.loads": _read_orjson,
           "msgspec decode": _read_msgspec, "msgspec typed": _read_msgspec_typed,
           "msgspec prototype read_run": _read_msgspec_prototype,
           "orjson prototype read_run": _read_orjson_prototype}


def _timed(call, *args) -> tuple[float, float]:
    """(wall, CPU) seconds of ``call(*args)``, the collector paused as ci-eval's reader pauses
    it, children's CPU counted (read_pair forks); the result freed outside the timing."""
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


_ROWS = msgspec.json.Decoder(list[Row])


def _after_parse(path: Path) -> dict:
    """read_run's fast path a piece of rows at a time (about 32 KB, as it cuts them), each
    step timed on its own over the whole file: a piece's text (the surrogate search and the
    UTF-8 decode), its parse by json as read_run parses it, then the block checks and the
    columns; beside them the same piece parsed by orjson, and decoded by msgspec into Rows."""
    from ci_eval.core.artefact.artefact import add_block, kept_depth, relevance_level
    from ci_eval.core.artefact.question_columns import QuestionColumns
    from ci_eval.core.artefact.row_blocks import checked_block
    from ci_eval.core.measure.metric_table import MetricTable
    from ci_eval.inputs import artefact_file as af

    layout = af._Layout((path.read_bytes(),))
    early = af._early(layout.head, str(path))
    metrics, level, depth = tuple(early["metrics"]), relevance_level(early), kept_depth(early)
    pieces = [piece for block in layout.rows() for piece in af._pieces(block)]
    bodies = [b"[" + piece.rstrip(b"\n").removesuffix(b",") + b"]" for piece in pieces]
    took = dict.fromkeys(("piece text", "json parse", "block checks", "columns", "orjson parse",
                          "msgspec typed parse"), 0.0)
    clock = time.perf_counter
    gc.collect()
    gc.disable()
    try:
        columns = QuestionColumns(MetricTable(metrics), None)
        for i, (piece, body) in enumerate(zip(pieces, bodies)):
            t0 = clock()
            text = af._piece_text(piece, True, True)[0]
            t1 = clock()
            rows = af._parsed_rows(text)
            t2 = clock()
            block = checked_block(rows, len(metrics))
            t3 = clock()
            add_block(columns, block, level, depth)
            t4 = clock()
            if i % 2:  # the two other parsers in either order
                orjson.loads(body)
                t5 = clock()
                _ROWS.decode(body)
                t6 = clock()
                took["orjson parse"] += t5 - t4
                took["msgspec typed parse"] += t6 - t5
            else:
                _ROWS.decode(body)
                t5 = clock()
                orjson.loads(body)
                t6 = clock()
                took["msgspec typed parse"] += t5 - t4
                took["orjson parse"] += t6 - t5
            took["piece text"] += t1 - t0
            took["json parse"] += t2 - t1
            took["block checks"] += t3 - t2
            took["columns"] += t4 - t3
            del rows, block
        start = clock()
        columns.table.finish()
        took["columns"] += clock() - start
    finally:
        gc.enable()
    del pieces, bodies, columns
    gc.collect()
    return took


def _compare_process(base: Path, head: Path, reader: str = "") -> tuple[float, float]:
    """`ci-eval compare BASE HEAD --no-config`, a whole process: wall and CPU seconds (its
    forked child's included). ``reader``: run through this script's ``--compare-as`` (the
    same imports either way), "ci-eval" as it is, "msgspec" or "orjson" with that
    prototype reader; "": `python -m ci_eval` itself."""
    argv = ([sys.executable, __file__, "--compare-as", reader] if reader else [sys.executable, "-m", "ci_eval"])
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*argv, "compare", str(base), str(head), "--no-config"],
                          cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr.decode())
    return wall, (after.ru_utime + after.ru_stime) - (kids.ru_utime + kids.ru_stime)


def _compare_output(base: Path, head: Path, reader: str) -> bytes:
    """What `--compare-as reader compare BASE HEAD --format json` prints."""
    return subprocess.run([sys.executable, __file__, "--compare-as", reader, "compare", str(base), str(head),
                           "--no-config", "--format", "json"], cwd=REPO, capture_output=True).stdout


def _compare_as(reader: str, argv: list[str]) -> None:
    from ci_eval import cli

    if reader in ("msgspec", "orjson"):
        with prototype_reader(reader):
            code = cli.main(argv)
    else:
        code = cli.main(argv)
    sys.stdout.flush()
    os._exit(code)


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


def measure(questions: int, repeat: int, keep: Path | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-json-") as tmp:
        root = _project((keep or Path(tmp)) / f"p{questions}", questions)
        base, base_s = _run(root, "base")
        head, head_s = _run(root, "head")
        print(f"{questions:,} questions: `ci-eval run` {base_s:.1f} s and {head_s:.1f} s, "
              f"{base.stat().st_size / 1e6:.1f} MB and {head.stat().st_size / 1e6:.1f} MB", flush=True)
        parts = _parts(head)
        written = _write_ci_eval(*parts)
        if written != head.read_bytes():
            raise SystemExit("the writer's pieces do not reproduce the artefact `run` wrote")
        identity = _identity(parts, written)
        del written
        report = _compare_output(base, head, "ci-eval")
        same_report = {}
        for kind in ("msgspec", "orjson"):
            same_read(head, kind)
            same_report[kind] = _compare_output(base, head, kind) == report
        compare = _alternate({"python -m ci_eval compare": (_compare_process, (base, head)),
                              "compare, ci-eval's reader": (_compare_process, (base, head, "ci-eval")),
                              "compare, msgspec prototype": (_compare_process, (base, head, "msgspec")),
                              "compare, orjson prototype": (_compare_process, (base, head, "orjson"))}, repeat)
        reads = _alternate({name: (call, (head,)) for name, call in READERS.items()}, repeat)
        pair = _alternate({"read_pair (base + head)": (_read_pair, (base, head)),
                           "read_run base, then head": (lambda b, h: (_read_ci_eval(b), _read_ci_eval(h)),
                                                        (base, head))}, repeat)
        steps = [_after_parse(head) for _ in range(repeat)]
        writes = _alternate({"ci-eval writer": (_write_ci_eval, parts), "orjson.dumps": (_write_orjson, parts),
                             "orjson.dumps exact": (_write_orjson_exact, parts)}, repeat)
        result = {
            "questions": questions, "artefact_mb": round(head.stat().st_size / 1e6, 1),
            "run_s": [round(base_s, 2), round(head_s, 2)],
            "compare": _summary(compare, "compare, ci-eval's reader"),
            "prototype_report_identical": same_report,
            "read": _summary(reads, "ci-eval read_run"),
            "read_both": _summary(pair, "read_pair (base + head)"),
            "read_run_steps_s": {k: round(statistics.median(a[k] for a in steps), 3) for k in steps[0]},
            "peak_mb": {name: _peak(name, head) for name in ("none", *READERS)},
            "write": _summary(writes, "ci-eval writer"),
            "orjson_output": identity,
        }
        if keep:
            result["artefacts"] = [str(base), str(head)]
        return result


# --------------------------------------------------------------------------- profile
def _json_parse(filename: str, name: str) -> bool:
    """Whether a profiled function's own time is JSON parsing: json's loads and decoder (whose
    own time holds the C scanner's: cProfile does not see it apart) and bytes' UTF-8 decode."""
    return filename.replace("\\", "/").endswith(("json/__init__.py", "json/decoder.py")) or (
        name == "<method 'decode' of 'bytes' objects>")


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
    parser.add_argument("--peak", nargs=2, metavar=("READER", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak:
        _peak_child(args.peak[0], Path(args.peak[1]))
        return
    print(f"load average at start: {os.getloadavg()} on {os.cpu_count()} cpus; python {sys.version.split()[0]}, "
          f"orjson {orjson.__version__}, msgspec {msgspec.__version__}", flush=True)
    results = []
    for n in map(int, args.scale.split(",")):
        if args.profile and not args.keep:
            raise SystemExit("--profile needs --keep DIR (the artefacts are profiled after they are measured)")
        result = measure(n, args.repeat, args.keep)
        if args.profile:
            base, head = map(Path, result["artefacts"])
            result["compare_profile"] = [profile_compare(base, head)]
        results.append(result)
        print(json.dumps(result, indent=1), flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
