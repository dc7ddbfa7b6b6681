"""Timeouts hold for a python retriever that holds the interpreter lock (retrieval/worker.py):
real projects through the real CLI, with the catastrophic regex and the C-level sum of the
issue. Expected times are derived from the config's timeouts and worker.GRACE."""

from __future__ import annotations

import time

from projects import GOOD_RETRIEVER, artefact, cli, errors_of, write_config, write_gold, write_module

from ci_eval.retrieval.worker import GRACE

TIMEOUT, TOTAL = 2, 5
RETRIEVER = f'type = "python"\ntarget = "retriever:search"\ntimeout = {TIMEOUT}\ntotal_timeout = {TOTAL}\n'
# Seconds a run may take beyond its deadline: two interpreter start-ups on a loaded machine.
START_UP = 8


def hogging(question: str, hog: str) -> str:
    """GOOD_RETRIEVER, but ``question`` runs ``hog`` (which never gives the lock back)."""
    return "import re\n" + GOOD_RETRIEVER.replace(
        "    n = question.split()[-1]\n", f"    if question == {question!r}:\n        {hog}\n"
        "    n = question.split()[-1]\n")


def run(tmp_path, source):
    write_gold(tmp_path)
    write_module(tmp_path, "retriever", source)
    write_config(tmp_path, RETRIEVER)
    start = time.monotonic()
    done = cli("run", "--out", "run.json", "--quiet", cwd=tmp_path)
    return done, time.monotonic() - start


def test_a_catastrophic_regex_fails_its_question_within_the_timeout_and_the_rest_are_answered(tmp_path):
    done, took = run(tmp_path, hogging("answerable 2", 're.match(r"(a+)+$", "a" * 40 + "!")'))

    assert done.returncode == 4, done.stderr
    # frozen once the heartbeat is TIMEOUT + GRACE late: well before the total timeout
    assert took < TIMEOUT + GRACE + START_UP
    art = artefact(tmp_path)
    assert errors_of(art) == {"a2": f"no answer within the {TIMEOUT}s timeout (the retriever held the "
                                    "interpreter, so its process was restarted)"}
    measured = {q["id"]: q["metrics"]["hit@1"] for q in art["questions"] if q["status"] == "ok"}
    assert measured == {"a1": 1.0, "a3": 1.0}


def test_a_retriever_that_always_holds_the_interpreter_ends_by_the_total_timeout(tmp_path):
    # Answers a1; every other question waits a moment (a request) and then holds the lock.
    source = "import re, time\n" + GOOD_RETRIEVER.replace(
        "    n = question.split()[-1]\n",
        "    if question != 'answerable 1':\n        time.sleep(0.5)\n        sum(range(3 * 10**9))\n"
        "    n = question.split()[-1]\n")
    done, took = run(tmp_path, source)

    assert done.returncode == 4, done.stderr
    assert took < TOTAL + GRACE + START_UP
    art = artefact(tmp_path)
    assert [q["id"] for q in art["questions"] if q["status"] == "ok"] == ["a1"]  # measured before: kept
    errors = errors_of(art)
    assert sorted(errors) == ["a2", "a3", "u1"]
    # A process frozen past the timeout fails its call; by the total timeout the rest end. A
    # second freeze cannot come before the deadline (TIMEOUT + GRACE twice is past TOTAL + GRACE),
    # and on a slow start the deadline may come first.
    assert 2 * (TIMEOUT + GRACE) > TOTAL + GRACE
    timed_out = [q for q, e in errors.items() if e.startswith(f"no answer within the {TIMEOUT}s timeout")]
    assert len(timed_out) <= 1
    total = {f"not run: the total timeout of {TOTAL}s passed", f"not finished: the total timeout of {TOTAL}s passed"}
    assert {e for q, e in errors.items() if q not in timed_out} <= total


def test_a_retriever_s_atexit_and_threads_do_not_outlive_its_process(tmp_path):
    # A heartbeat thread of an SDK's that never ends, and an atexit that would hang: the
    # worker ends as soon as it has answered.
    source = ("import atexit, threading, time\nthreading.Thread(target=time.sleep, args=(3600,)).start()\n"
              "atexit.register(time.sleep, 3600)\n" + GOOD_RETRIEVER)
    done, took = run(tmp_path, source)
    assert done.returncode == 0, done.stderr
    assert took < START_UP + TIMEOUT


# -- the worker booted before the gold set is read ----------------------------------------


def test_the_worker_booted_while_the_gold_set_is_read_is_used_or_ended(tmp_path, monkeypatch):
    """The run's python retriever process starts before the gold set is read (worker.prestart):
    on a good run that very process answers, and on a gold set that is bad input (exit 2) it
    is ended with the run; no process is left either way."""
    from ci_eval.cli import main
    from ci_eval.retrieval import worker

    started = []

    class Recorded(worker._Child):
        def __init__(self, config):
            super().__init__(config)
            started.append(self)

    monkeypatch.setattr(worker, "_Child", Recorded)
    monkeypatch.chdir(tmp_path)
    write_gold(tmp_path)
    write_module(tmp_path, "retriever", GOOD_RETRIEVER)
    write_config(tmp_path, RETRIEVER)
    assert main(["run", "--out", "run.json", "--quiet"]) == 0
    assert len(started) == 1 and started[0].proc.poll() is not None  # one process: booted early, then used
    assert not errors_of(artefact(tmp_path))

    (tmp_path / "gold.json").write_text("{ not json")
    assert main(["run", "--out", "again.json", "--quiet"]) == 2
    assert len(started) == 2 and started[1].proc.poll() is not None and worker._spare is None
    assert not (tmp_path / "again.json").exists()


# -- what the worker sends back -----------------------------------------------------------

def _results():
    from ci_eval.core.artefact.results import Retrieved, failed

    return [(0, Retrieved(("kb/a", "kb/b b", "ü"), (2.5, 1.0, -3e-300), 1.25, None, ("duplicate id(s) dropped",))),
            (3, failed("retriever raised ValueError: x", 0.5)),
            (4, Retrieved((), (), 0.0))]


def test_a_batch_of_results_reads_back_exactly():
    import json

    from ci_eval.retrieval.worker import _unpacked
    from ci_eval.retrieval.worker_serve import packed

    sent = _results()
    message = json.loads(json.dumps(packed(sent)))
    assert list(message) == ["p"]
    assert _unpacked(message["p"], depth=15, positions=5) == sent


def test_an_id_holding_a_nul_goes_unpacked_and_still_reads_back():
    import json

    from ci_eval.core.artefact.results import Retrieved
    from ci_eval.retrieval.worker import _retrieved
    from ci_eval.retrieval.worker_serve import packed

    sent = [(1, Retrieved(("a\0b", "c"), (1.0, 0.5), 2.0))]
    message = json.loads(json.dumps(packed(sent)))
    assert list(message) == ["r"]
    assert [_retrieved(item, 15, 5) for item in message["r"]] == sent


def test_a_forged_batch_is_dropped_whole():
    import base64
    import json
    from array import array

    from ci_eval.retrieval.worker import _unpacked
    from ci_eval.retrieval.worker_serve import packed

    good = json.loads(json.dumps(packed(_results())))["p"]
    nan = base64.b64encode(array("d", [float("nan")] * 3).tobytes()).decode()
    for forged in ({**good, "s": nan}, {**good, "n": [3, 0, 1]}, {**good, "i": [0, 3, 99]},
                   {**good, "e": [None, 5, None]}, {**good, "ids": good["ids"] + "\0extra"}, {"i": []}, []):
        assert _unpacked(forged, depth=15, positions=5) == []
    assert _unpacked(good, depth=2, positions=5) == []  # more results than the depth asked


def test_the_worker_orders_answers_without_importing_numpy(tmp_path):
    # The worker's environment is the user's, so OpenBLAS there is not held to one thread:
    # numpy imported for ci-eval's own ordering started a thread a core, and a small run took
    # twice the CPU. Each answer here comes unsorted (the one-ranking order, not the batch
    # path), and each call records whether numpy is loaded by then: the calls after the
    # first answers were ordered say whether ordering them imported it.
    source = (
        "import sys\nfrom pathlib import Path\n\n\ndef search(question, depth):\n"
        "    with open(Path(__file__).with_name('loaded.txt'), 'a') as f:\n"
        "        f.write(str('numpy' in sys.modules) + '\\n')\n"
        "    n = question.split()[-1]\n"
        "    return [('x' + n, 1.0), ('c' + n, 2.0)]\n")
    write_gold(tmp_path)
    write_module(tmp_path, "retriever", source)
    write_config(tmp_path, 'type = "python"\ntarget = "retriever:search"\nconcurrency = 1\n')
    done = cli("run", "--out", "run.json", "--quiet", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    art = artefact(tmp_path)
    assert {q["id"]: q["ranking"][0]["id"] for q in art["questions"] if q["id"].startswith("a")} == {
        "a1": "c1", "a2": "c2", "a3": "c3"}  # ordered: the higher score first
    loaded = (tmp_path / "loaded.txt").read_text().split()
    assert len(loaded) == len(art["questions"]) and set(loaded) == {"False"}
