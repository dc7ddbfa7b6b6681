"""TREC qrels and run parsing: formats as trec_eval reads them, and every error path."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from unittest import mock

import numpy as np
import pytest

from ci_eval.core.measure.trec_order import order
from ci_eval.errors import InputError
from ci_eval.trec import parse as trec
from ci_eval.trec.judge import judge


def run_of(text: str) -> dict:
    return trec.parse_run(text.encode(), "run.trec").as_pairs()


def test_run_keeps_file_order_and_ignores_rank_and_tag():
    pairs = run_of("q1 Q0 a 9 1.5 tag\nq1 Q0 b 1 2.5 other\nq2 Q0 a 1 -3 t\n")
    assert pairs == {"q1": [("a", 1.5), ("b", 2.5)], "q2": [("a", -3.0)]}


def test_run_whitespace_comments_blank_lines_and_junk_columns():
    text = (
        "# a comment\n"
        "\n"
        "q1\tQ0\ta\t1\t  2.0\tSTANDARD more junk at\n"
        "   # indented comment\n"
        "  q1 Q0 b#1 2 1.0 t\r\n"
        "q1 Q0 c 3 0.5 t"  # no final newline
    )
    assert run_of(text) == {"q1": [("a", 2.0), ("b#1", 1.0), ("c", 0.5)]}


def test_long_ids_and_non_ascii_ids_survive():
    long_id = "msmarco_v2.1_doc_50_2286987788#13_3087841662"
    assert run_of(f"q Q0 {long_id} 1 1 t\nq Q0 é 2 0 t\n") == {"q": [(long_id, 1.0), ("é", 0.0)]}


def test_scores_parse_exactly_as_floats():
    tokens = ["2.129133", "-3.5", "1e-05", "0.6898301657029192", ".5", "7.", "+7.25",
              "1.00000001", "123456789012345678901", "9007199254740993", "-0"]
    text = "".join(f"q Q0 d{i} 1 {t} x\n" for i, t in enumerate(tokens))
    scores = [s for _, s in run_of(text)["q"]]
    assert scores == [float(t) for t in tokens]


def test_random_scores_parse_exactly():
    rng = np.random.default_rng(3)
    values = rng.random(2000) * rng.choice([1e-3, 1, 1e3], 2000) * rng.choice([-1, 1], 2000)
    tokens = [repr(float(v)) for v in values] + [f"{v:.{i % 17}f}" for i, v in enumerate(values)]
    text = "".join(f"q Q0 d{i} 1 {t} x\n" for i, t in enumerate(tokens))
    scores = [s for _, s in run_of(text)["q"]]
    assert scores == [float(t) for t in tokens]


def test_qrels_parse_with_comments_and_negative_grades():
    text = b"# judged\nq1 0 a 1\nq1 0 CR#93 -1\n\nq2 0 x 0\n"
    assert trec.parse_qrels(text, "qrels").as_dict() == {"q1": {"a": 1, "CR#93": -1},
                                                          "q2": {"x": 0}}


def test_qrels_with_comments_equals_plain(shared_dir):
    base = shared_dir / "conformance" / "trec_eval"
    plain = trec.read_qrels(str(base / "qrels.test")).as_dict()
    commented = trec.read_qrels(str(base / "qrels.test.with-comments")).as_dict()
    assert plain.keys() == commented.keys()
    assert sum(map(len, plain.values())) == sum(map(len, commented.values()))


def test_empty_files():
    assert trec.parse_run(b"", "r").as_pairs() == {}
    assert trec.parse_qrels(b"# nothing\n\n", "q").as_dict() == {}


@pytest.mark.parametrize(
    "text, place, message",
    [
        ("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0\n", "line 2", "5 columns, expected at least 6"),
        ("q1 Q0 a 1 1.0 t\n\nq1 Q0 b 2 x t\n", "line 3", "score 'x' is not a finite number"),
        ("q1 Q0 a 1 nan t\n", "line 1", "score 'nan'"),
        ("q1 Q0 a 1 -inf t\n", "line 1", "score '-inf'"),
        ("q1 Q0 a 1 1e999 t\n", "line 1", "score '1e999'"),
        ("q1 Q0 a 1 1 t\nq2 Q0 a 1 1 t\nq1 Q0 a 2 0.5 t\n", "line 3",
         "document 'a' appears twice for query 'q1' (first on line 1)"),
    ],
)
def test_run_errors_name_the_line(text, place, message):
    with pytest.raises(InputError) as err:
        trec.parse_run(text.encode(), "run.trec")
    assert err.value.source == "run.trec" and err.value.place == place
    assert message in err.value.message


@pytest.mark.parametrize(
    "text, place, message",
    [
        ("q1 0 a 1\nq1 0 b\n", "line 2", "3 columns, expected 4"),
        ("q1 0 a 1 extra\n", "line 1", "5 columns, expected 4"),
        ("q1 0 a 1\nq1 0 b 1.5\n", "line 2", "grade '1.5' is not a whole number"),
        ("q1 0 a one\n", "line 1", "grade 'one'"),
        ("q1 0 a 1\n# c\nq1 0 a 2\n", "line 3", "document 'a' is judged twice for query 'q1'"),
    ],
)
def test_qrels_errors_name_the_line(text, place, message):
    with pytest.raises(InputError) as err:
        trec.parse_qrels(text.encode(), "qrels.txt")
    assert err.value.place == place and message in err.value.message


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="not found"):
        trec.read_run(str(tmp_path / "absent.trec"))


def test_read_run_pairs_and_qrels_dict(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 0.5 t\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 2\n")
    assert trec.read_run_pairs(str(run)) == {"q1": [("a", 0.5)]}
    assert trec.read_qrels_dict(str(qrels)) == {"q1": {"a": 2}}


def test_judge_orders_joins_and_cuts():
    qrels = trec.parse_qrels(b"q1 0 a 1\nq1 0 c 2\nq2 0 x 1\nq3 0 m 1\n", "q")
    run = trec.parse_run(b"q1 Q0 a 1 1 t\nq1 Q0 b 2 1 t\nq1 Q0 c 3 0.5 t\n"
                         b"q2 Q0 x 1 1 t\nq9 Q0 z 1 1 t\n", "r")
    judged = judge(qrels, run)
    assert judged.qids == ("q1", "q2") and judged.missing == ("q3",)
    assert judged.ignored == ("q9",)
    # b ties a and sorts first (id descending); c is third.
    assert judged.table.grades.tolist() == [[-1.0, 1.0, 2.0], [1.0, -1.0, -1.0]]
    cut = judge(qrels, run, complete=True, max_per_query=1)
    assert cut.qids == ("q1", "q2", "q3")
    assert cut.table.lengths.tolist() == [1, 1, 0]
    assert cut.table.num_rel.tolist() == [2, 1, 1]


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], capture_output=True,
                          text=True, cwd=cwd, check=False)


@pytest.mark.parametrize(
    "run_text, where",
    [
        ("q1 Q0 a 1 1.0 t\nq1 Q0 b 2\n", "run.trec:line 2: malformed line"),
        ("q1 Q0 a 1 1.0 t\nq1 Q0 a 2 0.5 t\n", "run.trec:line 2: document 'a' appears twice"),
        ("q1 Q0 a 1 inf t\n", "run.trec:line 1: score 'inf' is not a finite number"),
    ],
)
def test_cli_reports_one_line_and_exit_2(tmp_path, run_text, where):
    (tmp_path / "run.trec").write_text(run_text)
    (tmp_path / "qrels").write_text("q1 0 a 1\n")
    done = _cli("evaluate", "qrels", "run.trec", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and where in lines[0] and "Traceback" not in done.stderr


def test_cli_bad_qrels_line(tmp_path):
    (tmp_path / "run.trec").write_text("q1 Q0 a 1 1.0 t\n")
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b x\n")
    done = _cli("evaluate", "qrels", "run.trec", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "ci-eval: error: qrels:line 2: grade 'x' is not a whole number"


# --------------------------------------------------------------------------- fast paths
# The parser has fast paths (a block splitter for plain lines, a word-parallel decimal
# parser, hash filters for repeated pairs and for the join with the qrels). Each must give
# exactly what the general path gives.

QIDS = ["q1", "q2", "301", "2024-224960", "é", "a-rather-long-query-id-0123456789"]
DOCS = ["a", "b", "c", "Z", "é", "doc1", "doc10", "msmarco_v2.1_doc_50_2286987788#13_3087841662",
        "FR940202-2-00150"]
SCORE_POOL = ["1", "-1", "0.5", "2.25", "-0", "+.5", "7.", "1e-3", "12345678901234567890",
              "0.12345678901234567", "9007199254740993", "16.205085", "-3.5", "1.7976931348623157e308"]


def _random_score(rng) -> str:
    r = rng.random()
    if r < 0.3:
        return str(rng.choice(SCORE_POOL))
    if r < 0.6:
        return repr(float(rng.integers(0, 8)) / 4)
    if r < 0.8:
        return repr(float(rng.random() * 10.0 ** int(rng.integers(-5, 6))))
    return f"{rng.random() * 100:.{int(rng.integers(0, 20))}f}"


def _random_run(rng, odd: bool = True, bad: bool = True) -> bytes:
    """A run file of a few queries; `odd` adds comments, blank lines, tabs, runs of blanks,
    CR LF and extra columns; `bad` adds short lines, bad scores and repeated documents."""
    lines = []
    for _ in range(int(rng.integers(1, 5))):
        qid = str(rng.choice(QIDS))
        docs = list(rng.choice(DOCS, size=int(rng.integers(0, 7)), replace=not bad or rng.random() < 0.3))
        for doc in docs:
            score = _random_score(rng) if rng.random() < 0.3 else repr(float(rng.integers(0, 4)) / 2)
            if not bad and not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", score):
                score = "1.5"
            if not bad and abs(float(score)) == float("inf"):
                score = "2"
            cols = [qid, "Q0", str(doc), str(int(rng.integers(0, 9))), score, "t"]
            sep = " "
            if odd and rng.random() < 0.1:
                sep = str(rng.choice(["\t", "  ", " \t", "\x0b"]))
            if bad and rng.random() < 0.03:
                cols = cols[:5]
            if odd and rng.random() < 0.05:
                cols = cols + ["junk", "more"]
            line = sep.join(cols)
            if odd and rng.random() < 0.03:
                line = "  " + line
            if odd and rng.random() < 0.03:
                line = "# " + line
            if odd and rng.random() < 0.03:
                line += "\r"
            lines.append(line)
        if odd and rng.random() < 0.1:
            lines.append("")
    ending = "\n" if rng.random() < 0.9 else ""
    return ("\n".join(lines) + ending).encode()


def _random_qrels(rng, run: bytes) -> bytes:
    pairs = {}
    for line in run.decode().splitlines():
        cols = line.split()
        if len(cols) >= 3 and not cols[0].startswith("#") and rng.random() < 0.6:
            pairs[(cols[0], cols[2])] = int(rng.choice([-1, 0, 1, 2, 3]))
    pairs[("q1", "never-retrieved")] = 1
    return "".join(f"{q} 0 {d} {g}\n" for (q, d), g in pairs.items()).encode()


def _outcome(parse, text: bytes):
    """What a parse gives, comparable: the rows, or the error."""
    try:
        parsed = parse(text, "f")
    except InputError as err:
        return ("error", str(err))
    rows = parsed.scores.tolist() if hasattr(parsed, "scores") else parsed.grades.tolist()
    return (parsed.qids, parsed.code.tolist(), parsed.heads.tolist(), parsed.ids(),
            [float(x).hex() for x in rows])


@contextlib.contextmanager
def _general_splitter_only():
    with mock.patch.object(trec, "_split_plain", lambda *args: None):
        yield


@contextlib.contextmanager
def _small_blocks(block: int = 64, rows: int = 3):
    with mock.patch.object(trec, "_BLOCK", block), mock.patch.object(trec, "_ROWS", rows), \
            mock.patch.object(trec, "_DUP_ROWS", rows):
        yield


@pytest.mark.parametrize("seed", range(8))
def test_fast_paths_give_what_the_general_path_gives(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        run = _random_run(rng)
        qrels = _random_qrels(rng, run)
        for parse, text in ((trec.parse_run, run), (trec.parse_qrels, qrels)):
            expected = _outcome(parse, text)
            with _general_splitter_only():
                assert _outcome(parse, text) == expected
            with _small_blocks():
                assert _outcome(parse, text) == expected
            with _small_blocks(block=1), _general_splitter_only():
                assert _outcome(parse, text) == expected


def _reference_pairs(text: bytes) -> dict:
    """A run read line by line in plain Python, as trec_eval reads it."""
    out: dict = {}
    for raw in text.split(b"\n"):
        tokens = [t for t in re.split(rb"[\x00-\x20]+", raw) if t]
        if not tokens or tokens[0].startswith(b"#"):
            continue
        out.setdefault(tokens[0].decode(), []).append((tokens[2].decode(), float(tokens[4])))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_valid_random_runs_read_as_line_by_line(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(100):
        text = _random_run(rng, odd=bool(seed % 2), bad=False)
        try:
            got = run_of(text.decode())
        except InputError as err:
            assert "twice" in err.message  # the same document drawn twice for a query
            continue
        assert got == _reference_pairs(text)


def test_errors_name_the_right_line_across_blocks():
    lines = [f"q{i // 10} Q0 d{i} {i} {100 - i}.5 t" for i in range(120)]
    cases = {
        57: ("q5 Q0 d57 57 1.0", "line 58", "malformed line: 5 columns, expected at least 6"),
        77: ("q7 Q0 d77 77 1.0.0 t", "line 78", "score '1.0.0' is not a finite number"),
        90: ("q9 Q0 d91 90 1 t", "line 92", "document 'd91' appears twice for query 'q9' "
                                            "(first on line 91)"),
    }
    for at, (line, place, message) in cases.items():
        text = "\n".join(lines[:at] + [line] + lines[at + 1:]) + "\n"
        for context in (contextlib.nullcontext, _small_blocks, _general_splitter_only):
            with context(), pytest.raises(InputError) as err:
                trec.parse_run(text.encode(), "run.trec")
            assert (err.value.place, err.value.message) == (place, message)


def test_a_malformed_line_is_reported_before_a_bad_score_earlier_in_the_file():
    # As before the parser worked block by block: the whole file is split first.
    lines = [f"q1 Q0 d{i} {i} 1 t" for i in range(200)]
    lines[3] = "q1 Q0 d3 3 nan t"
    lines[150] = "q1 Q0 d150"
    with _small_blocks(), pytest.raises(InputError) as err:
        trec.parse_run(("\n".join(lines) + "\n").encode(), "r")
    assert err.value.place == "line 151" and "3 columns" in err.value.message


def test_a_line_longer_than_a_block():
    long_id = "x" * 300
    text = f"q1 Q0 a 1 2 t\nq1 Q0 {long_id} 2 1 t\nq2 Q0 b 1 0.5 t\n".encode()
    with _small_blocks(block=16):
        assert trec.parse_run(text, "r").as_pairs() == {"q1": [("a", 2.0), (long_id, 1.0)],
                                                        "q2": [("b", 0.5)]}


def test_a_longer_id_in_a_later_block_widens_the_ids():
    text = "".join(f"q1 Q0 {'d' * (i + 1)} {i} {i} t\n" for i in range(40)).encode()
    with _small_blocks():
        assert trec.parse_run(text, "r").ids() == ["d" * (i + 1) for i in range(40)]


def _decimal_tokens(rng, n: int) -> list[str]:
    tokens = []
    for _ in range(n):
        r = rng.random()
        if r < 0.2:
            tokens.append(repr(float(rng.random() * 10.0 ** int(rng.integers(-8, 12)))))
        elif r < 0.4:
            digits = "".join(map(str, rng.integers(0, 10, int(rng.integers(1, 22)))))
            point = int(rng.integers(0, len(digits) + 1))
            tokens.append(str(rng.choice(["", "-", "+"])) + digits[:point] + "." + digits[point:])
        elif r < 0.5:
            tokens.append("".join(map(str, rng.integers(0, 10, int(rng.integers(1, 21))))))
        elif r < 0.7:  # float32 values written as doubles: 17 significant digits
            value = np.float32(rng.standard_normal() * 10.0 ** int(rng.integers(-3, 4)))
            tokens.append(repr(float(value)))
        else:  # halfway between two doubles, to 15-21 significant digits
            x = float(rng.random() * 10.0 ** int(rng.integers(-3, 5)))
            mid = (np.longdouble(x) + np.longdouble(np.nextafter(x, np.inf))) / 2
            tokens.append(np.format_float_positional(mid, precision=int(rng.integers(15, 22)),
                                                     unique=False))
    return tokens


def _scores_of(tokens: list[str]) -> np.ndarray:
    text = "".join(f"q Q0 d{i} 1 {t} x\n" for i, t in enumerate(tokens)).encode()
    buf = np.frombuffer(text, dtype=np.uint8)
    blocks = list(trec._blocks(text, (0, 2, 4), 6, None, "r"))
    starts = np.concatenate([b[1][2] + (b[0].ctypes.data - buf.ctypes.data) for b in blocks])
    ends = np.concatenate([b[2][2] + (b[0].ctypes.data - buf.ctypes.data) for b in blocks])
    return trec._parse_scores(buf, starts, ends)


def _same_doubles(a, b) -> bool:
    return [float(x).hex() for x in a] == [float(x).hex() for x in b]


@pytest.mark.parametrize("seed", range(3))
def test_decimal_scores_round_exactly_as_strtod(seed):
    tokens = _decimal_tokens(np.random.default_rng(seed), 20_000)
    assert _same_doubles(_scores_of(tokens), [float(t) for t in tokens])


@pytest.mark.parametrize("token", [
    "-0", "+.5", "7.", "000000000000000001.5", "0000000000000000001.5", "1234567890123456789",
    "12345678901234567890", "-.0", ".", "-", "+", "1.2.3", "1e5", "--1", "1-", "0x10", "1_0",
    "12345678901234567.8901",
])
def test_score_edges_convert_as_numpy_does(token):
    full = _scores_of([token, "0.5"])
    try:
        expected = float(np.array([token.encode()]).astype(np.float64)[0])
    except ValueError:
        expected = float("nan")
    assert _same_doubles([full[0]], [expected])


def _judged_view(j):
    t = j.table
    return (j.qids, j.missing, j.ignored, t.grades.tolist(), t.lengths.tolist(), t.judged.tolist())


@pytest.mark.parametrize("seed", range(6))
def test_hash_collisions_change_nothing(seed):
    # Every id hashes alike: the filters nominate everything, exact checks decide.
    rng = np.random.default_rng(200 + seed)
    for _ in range(25):
        run = _random_run(rng, odd=False)
        qrels = _random_qrels(rng, run)
        expected = (_outcome(trec.parse_run, run), _outcome(trec.parse_qrels, qrels))
        try:
            judged = _judged_view(judge(trec.parse_qrels(qrels, "q"), trec.parse_run(run, "r"),
                                             complete=True, max_per_query=3))
        except InputError:
            judged = None
        with mock.patch.object(trec, "_digest", lambda words: np.zeros(len(words), np.uint64)):
            assert (_outcome(trec.parse_run, run), _outcome(trec.parse_qrels, qrels)) == expected
            if judged is not None:
                got = judge(trec.parse_qrels(qrels, "q"), trec.parse_run(run, "r"),
                                 complete=True, max_per_query=3)
                assert _judged_view(got) == judged


def _reference_grades(qrels: dict, run: dict, depth: int | None) -> dict:
    """Per qrels query with results: grades by rank, after trec_eval's order and -M."""
    out = {}
    for qid in sorted(qrels, key=lambda q: q.encode()):
        if qid not in run:
            continue
        ids = order(run[qid]).ids[:depth]
        out[qid] = [g if (g := qrels[qid].get(d, -1)) >= 0 else -1 for d in ids]
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shuffle", [False, True])
def test_judge_orders_like_order_in_any_row_order(seed, shuffle):
    rng = np.random.default_rng(300 + seed)
    run: dict = {}
    lines = []
    for q in range(int(rng.integers(1, 8))):
        qid = f"q{q}"
        docs = [f"d{int(i)}" for i in rng.choice(60, size=int(rng.integers(1, 40)), replace=False)]
        run[qid] = [(d, float(rng.integers(0, 5)) / 2) for d in docs]
        if rng.random() < 0.5:  # in score order, as most files are (ties in any order)
            run[qid].sort(key=lambda p: -p[1])
        lines += [f"{qid} Q0 {d} 0 {s!r} t" for d, s in run[qid]]
    if shuffle:
        rng.shuffle(lines)
        run = {}
        for line in lines:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, []).append((d, float(s)))
    qrels = {q: {d: int(rng.choice([-1, 0, 1, 2])) for d in rng.choice([f"d{i}" for i in range(60)], 20)}
             for q in list(run)[: max(1, len(run) - 1)]}
    qtext = "".join(f"{q} 0 {d} {g}\n" for q, j in qrels.items() for d, g in j.items()).encode()
    parsed = trec.parse_qrels(qtext, "q"), trec.parse_run(("\n".join(lines) + "\n").encode(), "r")
    for depth in (None, 5):
        judged = judge(*parsed, max_per_query=depth)
        expected = _reference_grades(qrels, run, depth)
        assert judged.qids == tuple(expected)
        width = judged.table.depth
        assert judged.table.grades.tolist() == [g + [-1] * (width - len(g)) for g in expected.values()]


def test_queries_split_over_the_file_are_still_checked_for_repeats():
    text = b"q1 Q0 a 1 1 t\nq2 Q0 a 1 1 t\nq1 Q0 b 2 0.5 t\nq1 Q0 a 3 0.2 t\n"
    with pytest.raises(InputError) as err:
        trec.parse_run(text, "r")
    assert err.value.place == "line 4" and "first on line 1" in err.value.message


def test_read_run_and_qrels_from_files(tmp_path):
    text = b"q1 Q0 a 1 1.5 t\nq1 Q0 b 2 0.5 t\n"
    (tmp_path / "run").write_bytes(text)
    (tmp_path / "empty").write_bytes(b"")
    assert trec.read_run(str(tmp_path / "run")).as_pairs() == trec.parse_run(text, "r").as_pairs()
    assert trec.read_run(str(tmp_path / "empty")).as_pairs() == {}
    assert trec.read_qrels(str(tmp_path / "empty")).as_dict() == {}
    with pytest.raises(InputError, match="folder"):
        trec.read_run(str(tmp_path))


@pytest.mark.parametrize("dup_rows", [2, 1 << 13])
def test_repeats_found_in_queries_bigger_than_the_filter_step(monkeypatch, dup_rows):
    monkeypatch.setattr(trec, "_DUP_ROWS", dup_rows)  # 2: the query is too big for the filter
    lines = [f"big Q0 d{i} {i} 1 t" for i in range(300)] + ["small Q0 d1 1 1 t"]
    assert len(trec.parse_run(("\n".join(lines) + "\n").encode(), "r").hashes) == 301
    lines[250] = "big Q0 d7 250 1 t"
    with pytest.raises(InputError) as err:
        trec.parse_run(("\n".join(lines) + "\n").encode(), "r")
    assert err.value.place == "line 251" and "first on line 8" in err.value.message


def test_evaluating_a_run_leaves_numpy_ma_unloaded(tmp_path):
    # np.unique loads numpy.ma on first use: tens of milliseconds of every evaluate.
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 0.5 t\nq1 Q0 c 2 0.5 t\nq2 Q0 b 1 1 t\n")
    code = ("import sys\nfrom ci_eval.trec.parse import read_qrels, read_run\n"
            "from ci_eval.trec.judge import judge\n"
            f"judge(read_qrels({str(tmp_path / 'qrels')!r}), read_run({str(tmp_path / 'run')!r}))\n"
            "print('numpy.ma' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_one_megabyte_long_id_among_many_rows_is_refused_at_its_line(tmp_path):
    # Ids are held as rows of words as wide as the longest: one 1.3 MB "id" among 120,000
    # rows asked numpy for 144 GiB (an internal error); it is refused at its line at once.
    rows = [f"q{i // 100} Q0 d{i} {i % 100 + 1} {1000 - i % 100} t\n" for i in range(120_000)]
    rows[60_000] = "q600 Q0 " + "<top><num>1</top>" * 80_000 + " 1 1.0 t\n"
    (tmp_path / "run.trec").write_text("".join(rows))
    (tmp_path / "qrels.txt").write_text("q1 0 d100 1\n")
    done = subprocess.run([sys.executable, "-m", "ci_eval", "evaluate", "qrels.txt", "run.trec"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("ci-eval: error: run.trec:line 60001: a field of 1,360,000 bytes: ids and numbers "
                           "are at most 4,096 bytes\n")


def test_a_file_that_cannot_be_mapped_is_read_and_parsed_alike(tmp_path, monkeypatch):
    import mmap

    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i % 7} Q0 d{i} {i} {1 / (i + 1)!r} t\n" for i in range(500)))
    mapped = trec.read_run(str(path)).as_pairs()

    def refused(*args, **kwargs):
        raise OSError("no mapping here")

    monkeypatch.setattr(mmap, "mmap", refused)
    assert trec.read_run(str(path)).as_pairs() == mapped
