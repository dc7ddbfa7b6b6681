"""TREC qrels and run parsing: formats as trec_eval reads them, and every error path."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ci_eval import trec
from ci_eval.errors import InputError


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
    judged = trec.judge(qrels, run)
    assert judged.qids == ("q1", "q2") and judged.missing == ("q3",)
    assert judged.ignored == ("q9",)
    # b ties a and sorts first (id descending); c is third.
    assert judged.table.grades.tolist() == [[-1.0, 1.0, 2.0], [1.0, -1.0, -1.0]]
    cut = trec.judge(qrels, run, complete=True, max_per_query=1)
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
