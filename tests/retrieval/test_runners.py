import sys

import fake_retrievers as fr
import pytest
from suite_paths import SUPPORT

from ci_eval.retrieval import command_runner, python_runner, run_file
from ci_eval.retrieval.query import Query

SCRIPT = str(SUPPORT / "fake_retrievers.py")
QUERIES = [Query(f"q{i}", f"{w} question") for i, w in enumerate(["beta", "alpha", "gamma", "delta"])]


def collect(stream):
    return list(stream)


def test_callable_results_in_question_order_with_tie_order_and_latency():
    out = collect(python_runner.run_callable(fr.lexical, QUERIES, depth=3, concurrency=3))
    assert [qid for qid, _ in out] == ["q0", "q1", "q2", "q3"]
    r = dict(out)["q0"]
    # beta scores 1.0; alpha 0.5 and gamma 0.3 follow by score.
    assert r.ids == ("beta", "alpha", "gamma") and r.scores == (1.0, 0.5, 0.3)
    assert all(res.latency_ms is not None and res.latency_ms >= 0 for _, res in out)


def test_callable_receives_depth_and_params():
    (qid, r), *_ = collect(python_runner.run_callable(fr.echo_params, QUERIES[:1], 6, {"b": 0.5, "a": 1}))
    # Equal scores: trec_eval's order puts the larger id first.
    assert r.ids == ("b=0.5", "a=1")


def test_callable_exception_fails_only_that_question():
    queries = [Query("ok", "alpha"), Query("bad", "boom alpha"), Query("ok2", "beta")]
    out = dict(collect(python_runner.run_callable(fr.failing, queries, 3)))
    assert out["bad"].error == "retriever raised RuntimeError: index shard 3 unavailable"
    assert out["ok"].ids[0] == "alpha" and out["ok2"].ids[0] == "beta"


@pytest.mark.parametrize(
    "word, expect",
    [
        ("nan", "non-finite score"),
        ("dict", "expected a list"),
        ("tuple3", "not an (id, score) pair"),
    ],
)
def test_unusable_results_become_question_errors(word, expect):
    (_, r), = collect(python_runner.run_callable(fr.garbage, [Query("q", f"{word} x")], 3))
    assert r.failed and expect in r.error


def test_duplicate_ids_keep_the_first_and_warn():
    (_, r), = collect(python_runner.run_callable(fr.garbage, [Query("q", "dup x")], 3))
    assert r.ids == ("alpha", "beta") and r.scores == (1.0, 0.5)
    assert r.warnings == ("1 duplicate id(s) dropped (first occurrence kept)",)


def test_unknown_ids_are_warned_about():
    (_, r), = collect(python_runner.run_callable(fr.lexical, [Query("q", "alpha")], 2, known_ids={"alpha"}))
    assert r.warnings and "not in the index" in r.warnings[0] and "'beta'" in r.warnings[0]


def test_hung_call_times_out_and_the_rest_complete():
    queries = [Query("slow", "alpha 5"), Query("fast", "beta 0")]
    out = dict(collect(python_runner.run_callable(fr.sleepy, queries, 2, concurrency=2, timeout=0.3)))
    assert "no answer within the 0.3s timeout" in out["slow"].error
    assert out["fast"].ids[0] == "beta"


def test_total_timeout_marks_the_rest_not_run():
    queries = [Query(f"q{i}", "alpha 0.4") for i in range(6)]
    out = dict(collect(python_runner.run_callable(fr.sleepy, queries, 2, concurrency=1, timeout=5, total_timeout=0.5)))
    assert not out["q0"].failed
    assert all(out[f"q{i}"].failed and "total timeout" in out[f"q{i}"].error for i in range(2, 6))


def test_batch_form():
    out = collect(python_runner.run_callable_batch(fr.lexical_batch, QUERIES, 2, batch_size=3))
    assert [(qid, r.ids[0]) for qid, r in out] == [("q0", "beta"), ("q1", "alpha"), ("q2", "gamma"), ("q3", "delta")]


def command(mode):
    return [sys.executable, SCRIPT, mode]


def test_command_protocol_round_trip():
    out = collect(command_runner.run_command(command("ok"), QUERIES, 3, concurrency=2))
    assert [(qid, r.ids[0]) for qid, r in out] == [("q0", "beta"), ("q1", "alpha"), ("q2", "gamma"), ("q3", "delta")]


def test_command_out_of_order_answers_are_matched_by_id():
    out = collect(command_runner.run_command(command("reverse"), QUERIES, 3, concurrency=2))
    assert [(qid, r.ids[0]) for qid, r in out] == [("q0", "beta"), ("q1", "alpha"), ("q2", "gamma"), ("q3", "delta")]


def test_command_receives_params_in_environment():
    (_, r), = collect(command_runner.run_command(command("params"), QUERIES[:1], 3, {"chunk_size": 384}))
    assert r.ids == ('{"chunk_size": 384}',)


def test_command_crash_is_recorded_and_process_restarted():
    queries = [Query(f"q{i}", "alpha") for i in range(5)]
    out = dict(collect(command_runner.run_command(command("crash"), queries, 3, concurrency=1)))
    crashed = [q for q, r in out.items() if r.failed]
    assert crashed and "exited with code 7" in out[crashed[0]].error
    assert "out of memory" in out[crashed[0]].error
    assert sum(not r.failed for r in out.values()) >= 3


def test_command_hang_times_out_then_recovers_on_a_new_process():
    queries = [Query("a", "alpha"), Query("h", "alpha hang"), Query("b", "beta")]
    out = dict(collect(command_runner.run_command(command("hang"), queries, 3, concurrency=1, timeout=0.5)))
    assert not out["a"].failed and out["b"].ids[0] == "beta"
    assert "no answer within the 0.5s timeout" in out["h"].error


def test_command_garbage_line_leaves_that_question_failed(capsys):
    queries = [Query(f"q{i}", "alpha") for i in range(3)]
    out = dict(collect(command_runner.run_command(command("garbage"), queries, 3, concurrency=1, timeout=0.5)))
    assert out["q1"].failed and not out["q0"].failed and not out["q2"].failed
    assert "1 unusable line(s)" in capsys.readouterr().err


def test_command_stderr_flood_does_not_block():
    out = collect(command_runner.run_command(command("noise"), QUERIES, 3, concurrency=2, timeout=10))
    assert all(not r.failed for _, r in out)


def test_missing_command_is_a_retriever_error():
    from ci_eval.errors import RetrieverError

    with pytest.raises(RetrieverError, match="not found"):
        collect(command_runner.run_command(["/nonexistent/retriever"], QUERIES, 3))


def test_run_file_jsonl_and_missing_questions(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"id": "q0", "results": [{"id": "b", "score": 1}, {"id": "a", "score": 1}]}\n')
    run = run_file.read_run_file(str(path), "jsonl", str(path))
    out = dict(run_file.run_from_file(run, QUERIES[:2], 3, str(path)))
    assert out["q0"].ids == ("b", "a")
    assert out["q1"].ids == () and "not in the run file" in out["q1"].warnings[0]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("not json\n", "line 1"),
        ('{"id": 3, "results": []}\n', 'string "id"'),
        ('{"id": "q", "results": {}}\n', '"results"'),
        ('{"id": "q", "results": []}\n{"id": "q", "results": []}\n', "appears twice"),
    ],
)
def test_run_file_jsonl_errors_name_the_line(tmp_path, text, fragment):
    from ci_eval.errors import InputError

    path = tmp_path / "run.jsonl"
    path.write_text(text)
    with pytest.raises(InputError, match=fragment) as info:
        run_file.read_run_file(str(path), "jsonl", str(path))
    assert str(info.value).startswith(str(path))
