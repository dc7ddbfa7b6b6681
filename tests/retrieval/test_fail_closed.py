"""No silent pass on the retrieval side: whatever the user's retriever does on any
question (raise, return None, exit), it is an error on that question, counted, shown,
exit 4. Each case is a real project run by the real CLI."""

from __future__ import annotations

import pytest
from projects import GOOD_RETRIEVER, artefact, cli, errors_of, write_config, write_gold, write_module, write_script

PY = 'type = "python"\ntarget = "retriever:search"\n'


def run(tmp_path, *extra):
    return cli("run", "--out", "run.json", *extra, cwd=tmp_path)


def project(tmp_path, source, retriever=PY, extra="", gold=None):
    write_gold(tmp_path, gold)
    write_module(tmp_path, "retriever", source)
    write_config(tmp_path, retriever, extra)


def test_a_good_retriever_passes(tmp_path):
    project(tmp_path, GOOD_RETRIEVER)
    out = run(tmp_path)
    assert out.returncode == 0, out.stderr
    art = artefact(tmp_path)
    assert art["summary"]["errors"] == 0 and art["summary"]["overall"]["means"]["hit@1"] == 1.0


def test_raising_on_an_unanswerable_question_is_an_error_not_an_abstention(tmp_path):
    project(tmp_path, GOOD_RETRIEVER.replace('    return [("x" + n, 0.1)]',
                                             '    raise RuntimeError("index offline")'))
    out = run(tmp_path)
    assert out.returncode == 4, out.stderr
    art = artefact(tmp_path)
    u1 = next(q for q in art["questions"] if q["id"] == "u1")
    assert u1["status"] == "error" and "RuntimeError: index offline" in u1["error"]
    assert art["summary"]["errors"] == 1
    assert art["summary"]["unanswerable"]["abstained"] == 0  # it never answered, so never abstained
    # The answerable means are untouched by the failed unanswerable question.
    assert art["summary"]["overall"] == {"count": 3, "means": art["summary"]["overall"]["means"]}
    assert art["summary"]["overall"]["means"]["hit@1"] == 1.0
    assert "failed on 1 question(s) (1 of them unanswerable)" in out.stderr
    assert "retriever errors: 1 question(s) (1 of them unanswerable)" in out.stdout


@pytest.mark.parametrize("body, fragment", [
    ("    x = [('c1', 1.0)]\n", "got None"),                        # a forgotten return
    ("    import sys\n    sys.exit(0)\n", "called sys.exit(0)"),
    ("    raise KeyboardInterrupt\n", "raised KeyboardInterrupt"),
    ("    raise SystemExit('bye')\n", "called sys.exit('bye')"),
    ("    import os\n    os._exit(0)\n", "called os._exit(0)"),
    ("    return 42\n", "expected a list of (id, score) pairs, got int"),
    ("    return ['c1', 'c2']\n", "not an (id, score) pair"),
])
def test_every_way_a_call_can_fail_is_an_error_on_every_question(tmp_path, body, fragment):
    project(tmp_path, "def search(question, depth):\n" + body, extra="")
    (tmp_path / "ci-eval.toml").write_text((tmp_path / "ci-eval.toml").read_text() + "timeout = 5\n")
    out = run(tmp_path)
    assert out.returncode == 4, (out.stdout, out.stderr)
    errors = errors_of(artefact(tmp_path))
    assert sorted(errors) == ["a1", "a2", "a3", "u1"]  # answerable and unanswerable alike
    assert all(fragment in e for e in errors.values()), errors
    assert "the retriever failed on 4 question(s)" in out.stderr


def test_a_batch_returning_none_fails_its_questions(tmp_path):
    project(tmp_path, "def search(questions, depth):\n    return None\n",
            retriever=PY + "batch = true\n")
    out = run(tmp_path)
    assert out.returncode == 4
    assert all("returned None" in e for e in errors_of(artefact(tmp_path)).values())


@pytest.mark.parametrize("at_import, fragment", [
    ("import sys\nsys.exit(0)\n", "importing 'retriever' called sys.exit(0)"),
    ("import os\nos._exit(0)\n", "importing 'retriever' called os._exit(0)"),
    ("raise RuntimeError('KB_API_KEY is not set')\n",
     "importing 'retriever' raised RuntimeError: KB_API_KEY is not set"),
])
def test_a_module_that_exits_or_raises_while_imported_fails_every_question(tmp_path, at_import, fragment):
    project(tmp_path, at_import + GOOD_RETRIEVER)
    out = run(tmp_path)
    assert out.returncode == 4, (out.stdout, out.stderr)
    art = artefact(tmp_path)
    assert art["summary"]["errors"] == 4
    assert all(e == fragment for e in errors_of(art).values())
    assert fragment in out.stderr
    # check reports the same thing as bad input, at its place
    checked = cli("check", cwd=tmp_path)
    assert checked.returncode == 2 and f"ci-eval.toml:retriever.target: {fragment}" in checked.stderr


def test_a_command_that_reports_an_error_on_an_unanswerable_question(tmp_path):
    write_gold(tmp_path)
    write_script(tmp_path, "retrieve.py", """
        import json, sys
        for line in sys.stdin:
            q = json.loads(line)
            if q["question"].startswith("unanswerable"):
                out = {"id": q["id"], "error": "no such collection"}
            else:
                out = {"id": q["id"], "results": [{"id": "c" + q["question"].split()[-1], "score": 1}]}
            print(json.dumps(out), flush=True)
    """)
    write_config(tmp_path, 'type = "command"\ncommand = ["./retrieve.py"]\n')
    out = run(tmp_path)
    assert out.returncode == 4, out.stderr
    assert errors_of(artefact(tmp_path)) == {"u1": "retriever reported: no such collection"}


def test_the_first_questions_failing_alike_stop_the_run_with_one_message(tmp_path):
    from ci_eval.core.artefact.results import STOP_AFTER
    from ci_eval.retrieval.pool import lookahead

    n = 500
    write_gold(tmp_path, [{"id": f"q{i:02d}", "question": f"q {i}", "gold": ["c"]} for i in range(n)])
    calls = tmp_path / "calls.log"
    write_module(tmp_path, "retriever", f"""
        def search(question, depth):
            with open({str(calls)!r}, "a") as f:
                f.write(question + "\\n")
            raise ConnectionError("vector store unreachable")
    """)
    write_config(tmp_path, PY + "concurrency = 1\n")
    out = run(tmp_path)
    assert out.returncode == 4
    asked = len(calls.read_text().splitlines())
    # The pool queues work ahead of the results read; past that nothing more is asked.
    assert STOP_AFTER <= asked <= STOP_AFTER + lookahead(1) + 1 < n
    errors = errors_of(artefact(tmp_path))
    assert len(errors) == n  # the questions not asked are errors too: never a pass
    assert f"the first {STOP_AFTER} questions all failed with the same error" in errors[f"q{n - 1}"]
    assert (f"stopped early: the first {STOP_AFTER} questions all failed with the same error; "
            f"the other {n - STOP_AFTER} are recorded as errors, not run") in out.stdout.splitlines()


def test_failures_that_differ_do_not_stop_the_run(tmp_path):
    from ci_eval.core.artefact.results import STOP_AFTER

    n = 2 * STOP_AFTER
    write_gold(tmp_path, [{"id": f"q{i:02d}", "question": f"q {i}", "gold": ["c"]} for i in range(n)])
    write_module(tmp_path, "retriever", """
        def search(question, depth):
            raise KeyError(question)
    """)
    write_config(tmp_path, PY)
    out = run(tmp_path)
    assert out.returncode == 4
    assert all("KeyError" in e for e in errors_of(artefact(tmp_path)).values())
    assert "stopped early" not in out.stdout


# A dependency's atexit handler that ends the interpreter with 0, and a retriever failing on
# two questions: the run decided exit 4 and must end with it.
ATEXIT_OS_EXIT = """
import atexit, os
atexit.register(lambda: os._exit(0))
""" + GOOD_RETRIEVER.replace('    n = question.split()[-1]\n',
                             '    n = question.split()[-1]\n'
                             '    if question in ("answerable 1", "answerable 2"):\n        raise RuntimeError("index offline")\n')


@pytest.mark.parametrize("entry", ["python -m ci_eval", "ci-eval"])
def test_an_atexit_handler_of_the_retriever_cannot_replace_the_exit_code(tmp_path, entry):
    project(tmp_path, ATEXIT_OS_EXIT)
    if entry == "ci-eval":
        out = console_script("run", "--out", "run.json", cwd=tmp_path)
    else:
        out = run(tmp_path)
    assert out.returncode == 4, out.stderr
    assert sorted(errors_of(artefact(tmp_path))) == ["a1", "a2"]
    assert "retriever failed on 2 question(s)" in out.stderr


def test_a_non_daemon_thread_of_the_retriever_does_not_keep_the_run_alive(tmp_path):
    # An SDK heartbeat: started when the module is imported, never ends.
    project(tmp_path, "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,)).start()\n"
            + GOOD_RETRIEVER)
    out = run(tmp_path)  # cli's subprocess timeout (120 s) fails the test if the run hangs
    assert out.returncode == 0, out.stderr
    assert artefact(tmp_path)["summary"]["errors"] == 0


def console_script(*args, cwd):
    """The ``ci-eval`` entry point installed beside this interpreter, as a user runs it."""
    import os
    import subprocess
    import sys

    script = os.path.join(os.path.dirname(sys.executable), "ci-eval")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([script, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)
