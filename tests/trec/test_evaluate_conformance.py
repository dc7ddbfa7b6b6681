"""`ci-eval evaluate` against trec_eval 10.0's own outputs in ../shared/conformance.

Every line of a supported measure in an expected file must come out identical (name,
query, value to 4 decimals) and in the same order; lines of measures ci-eval does not
compute are skipped. Expected values are read from the files, never copied here.
"""

from __future__ import annotations

import json
import re

import pytest

from ci_eval.cli import main

SUPPORTED = re.compile(r"^(num_q|num_ret|num_rel|num_rel_ret|map|recip_rank|"
                       r"(P|recall|ndcg_cut|success)_\d+)$")
EDGE_MEASURES = ["-m", "recip_rank", "-m", "recall.1,2,5", "-m", "P.2,10", "-m",
                 "ndcg_cut.2,5", "-m", "success.1", "-m", "num_q", "-m", "num_rel",
                 "-m", "num_ret", "-m", "num_rel_ret"]
VASWANI_CUSTOM = ["-m", "recall.1,3,10,50", "-m", "P.1,3,10", "-m", "ndcg_cut.1,3,10", "-m",
                  "success.1,3,10", "-m", "recip_rank", "-m", "map"]


def supported_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if SUPPORTED.match(line.split("\t")[0].strip())]


def evaluate(capsys, *argv) -> tuple[int, str, str]:
    code = main(["evaluate", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def check(capsys, expected_file, *argv) -> list[str]:
    code, out, _ = evaluate(capsys, *argv)
    assert code == 0
    expected = supported_lines(expected_file.read_text())
    assert expected, f"no supported measure in {expected_file.name}"
    assert out.splitlines() == expected
    return expected


TREC_CASES = [
    ("out.test", "qrels.test", "results.test", []),
    ("out.test", "qrels.test.with-comments", "results.test", []),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", []),
    ("out.test.a", "qrels.test", "results.test", ["-m", "all_trec"]),
    ("out.test.aq", "qrels.test", "results.test", ["-m", "all_trec", "-q"]),
    ("out.test.aqc", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c"]),
    ("out.test.aqcM", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c", "-M100"]),
    ("out.test.aql", "qrels.rel_level", "results.test", ["-m", "all_trec", "-q", "-l2"]),
    # trec_eval read "23.4" as 23 (atol); ci-eval wants whole numbers, so ask for 23.
    ("out.test.meas_params", "qrels.test", "results.test",
     ["-q", "-m", "P.5,7,3", "-m", "recall.20,2000", "-m", "ndcg_cut.10,20,23",
      "-m", "success.2,5,20"]),
]


@pytest.mark.parametrize("expected, qrels, results, flags", TREC_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in TREC_CASES])
def test_trec_eval_test_suite(capsys, shared_dir, expected, qrels, results, flags):
    base = shared_dir / "conformance" / "trec_eval"
    check(capsys, base / expected, *flags, base / qrels, base / results)


VASWANI_CASES = [
    (run, suffix, flags)
    for run in ("vaswani_bm25", "vaswani_bm25_ties")
    for suffix, flags in (
        ("custom.q.out", ["-q", *VASWANI_CUSTOM]),
        ("all_trec.q.out", ["-q", "-m", "all_trec"]),
        ("all_trec.qc.out", ["-c", "-q", "-m", "all_trec"]),
    )
]


@pytest.mark.parametrize("run, suffix, flags", VASWANI_CASES,
                         ids=[f"{c[0]}.{c[1]}" for c in VASWANI_CASES])
def test_vaswani_runs_including_tie_heavy(capsys, shared_dir, run, suffix, flags):
    base = shared_dir / "conformance" / "vaswani"
    qrels = shared_dir / "collections" / "vaswani_npl" / "qrels"
    lines = check(capsys, base / f"{run}.{suffix}", *flags, qrels, base / f"{run}.run")
    assert len(lines) > 93  # per-query lines were compared, not only the summary


def test_edge_missing_query_with_c(capsys, shared_dir):
    edge = shared_dir / "conformance" / "edge"
    check(capsys, edge / "out.qrels_run.c", "-c", "-q", *EDGE_MEASURES, edge / "qrels", edge / "run")


@pytest.mark.parametrize("flags, expected", [([], "out.qrels_noq3_run.default"),
                                              (["-l2"], "out.qrels_noq3_run.l2")])
def test_edge_qrels_without_missing_query(capsys, shared_dir, flags, expected):
    edge = shared_dir / "conformance" / "edge"
    check(capsys, edge / expected, *flags, "-q", *EDGE_MEASURES, edge / "qrels_noq3", edge / "run")


def test_edge_missing_query_without_c_is_left_out(capsys, shared_dir):
    # trec_eval 10.0 prints q1 and q2 and then exits 4; ci-eval prints the same query
    # lines and the summary without q3, the same as for qrels without q3, plus a note.
    edge = shared_dir / "conformance" / "edge"
    code, out, err = evaluate(capsys, "-q", *EDGE_MEASURES, edge / "qrels", edge / "run")
    assert code == 0
    per_query = supported_lines((edge / "out.qrels_run.default").read_text())
    assert out.splitlines()[: len(per_query)] == per_query
    assert out.splitlines() == supported_lines((edge / "out.qrels_noq3_run.default").read_text())
    assert "q3" in err and "-c" in err


def test_edge_near_equal_scores(capsys, shared_dir):
    edge = shared_dir / "conformance" / "edge"
    check(capsys, edge / "out.eps2", "-q", "-m", "recip_rank", edge / "qrels_noq3",
          edge / "run_eps2")


def test_edge_duplicate_document_is_an_input_error(capsys, shared_dir):
    edge = shared_dir / "conformance" / "edge"
    assert "duplicate docs" in (edge / "out.dup").read_text()  # trec_eval refuses it too
    code, out, err = evaluate(capsys, edge / "qrels_noq3", edge / "run_dup")
    assert code == 2 and out == ""
    assert "run_dup:line 2: document 'a' appears twice" in err


def test_json_format_carries_full_precision(capsys, shared_dir):
    base = shared_dir / "conformance" / "trec_eval"
    code, out, _ = evaluate(capsys, "--format", "json", "-m", "map", "-m", "num_rel",
                            base / "qrels.test", base / "results.test")
    assert code == 0
    data = json.loads(out)
    assert set(data["per_query"]) == {"301", "302", "303"}
    maps = [data["per_query"][q]["map"] for q in ("301", "302", "303")]
    assert data["all"]["map"] == pytest.approx(sum(maps) / 3, abs=1e-15)
    assert f"{data['all']['map']:.4f}" == "0.1785"  # out.test's value
    assert data["all"]["num_rel"] == sum(data["per_query"][q]["num_rel"] for q in data["per_query"])


@pytest.mark.parametrize("flag, message", [
    (["-m", "bpref"], "ci-eval does not compute"),
    (["-m", "P.0"], "not a positive whole number"),
    (["-m", "nonsense"], "is unknown"),
    (["-M", "0"], "-M 0"),
    (["-l", "-1"], "-l -1"),
])
def test_bad_flags_are_usage_errors(capsys, shared_dir, flag, message):
    base = shared_dir / "conformance" / "trec_eval"
    code, out, err = evaluate(capsys, *flag, base / "qrels.test", base / "results.test")
    assert code == 2 and message in err and out == ""
