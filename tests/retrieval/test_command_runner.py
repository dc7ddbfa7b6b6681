"""A hostile command retriever through `ci-eval run`: real processes, real pipes.

Each retriever below is a small program written into the test's folder. None of them may
hold the run past its timeouts, leave a process behind, flood memory or see the token.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from run_files import read_run
from suite_paths import REPO_ROOT

from ci_eval.retrieval.command_runner import MAX_LINE_BYTES

# A guard against a hang, not a measurement: every run below ends in a few seconds.
GUARD = 120
LONG_QUESTION = "alpha " + "x" * 9_000  # near the gold set's 10,000-character cap


def gold(questions: int = 8, text: str = "alpha please") -> dict:
    return {"schema_version": 1, "questions": [
        {"id": f"q{i}", "question": text, "gold": ["alpha"]} for i in range(1, questions + 1)]}


def project(tmp_path: Path, program: str, *, questions: int = 8, text: str = "alpha please",
            retriever: str = "") -> Path:
    (tmp_path / "gold.json").write_text(json.dumps(gold(questions, text)))
    (tmp_path / "retriever.py").write_text(textwrap.dedent(program))
    (tmp_path / "ci-eval.toml").write_text(
        'gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "command"\n'
        f'command = [{json.dumps(sys.executable)}, "retriever.py"]\n{retriever}\n')
    return tmp_path


def run(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "ci_eval", "run", "--quiet", "--out", "run.json", *args],
                          cwd=cwd, env=full, capture_output=True, text=True, timeout=GUARD)


def errors(cwd: Path) -> dict[str, str]:
    art = read_run(cwd / "run.json")
    return {q["id"]: q["error"] for q in art["questions"] if q["status"] == "error"}


def gone(pid: int) -> bool:
    """No such process, or only its zombie (a container's init may not reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


ANSWER = """
    import json, sys
    def answer(line):
        q = json.loads(line)
        print(json.dumps({"id": q["id"], "results": [{"id": "alpha", "score": 1.0}]}), flush=True)
"""


def test_a_retriever_that_never_reads_stdin_cannot_hold_the_run(tmp_path):
    # Eight 9,000-character questions in flight are more than a pipe holds: writing them on
    # the thread that keeps the timeouts would block it for good.
    cwd = project(tmp_path, "import time\ntime.sleep(300)\n", text=LONG_QUESTION,
                  retriever="concurrency = 8\ntimeout = 1\ntotal_timeout = 4\n")

    done = run(cwd)

    assert done.returncode == 4, done.stderr
    problems = errors(cwd)
    assert sorted(problems) == [f"q{i}" for i in range(1, 9)]
    assert all("timeout" in why for why in problems.values()), problems


def test_an_over_long_line_fails_the_questions_in_flight_with_bounded_memory(tmp_path):
    # 200 MB without a newline, written in 1 MB pieces, then the answers.
    program = ANSWER + """
    first = sys.stdin.readline()
    chunk = b"x" * (1 << 20)
    for _ in range(200):
        sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.write(b"\\n"); sys.stdout.flush()
    for line in sys.stdin:
        answer(line)
    """
    cwd = project(tmp_path, program, questions=3, retriever="concurrency = 1\ntimeout = 30\n")
    wrapper = ("import resource, subprocess, sys\n"
               "code = subprocess.run(sys.argv[1:]).returncode\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
               "sys.exit(code)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-m", "ci_eval", "run",
                           "--quiet", "--out", "run.json"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=GUARD)

    assert done.returncode == 4, done.stderr
    assert errors(cwd) == {"q1": f"the retriever wrote a line over {MAX_LINE_BYTES:,} bytes (the limit)"}
    peak_kib = int(done.stdout.split()[-1])
    # ci-eval with numpy loaded is well under 150 MB; holding the line would be over 200 MB.
    assert peak_kib < 150 * 1024, peak_kib


FORKS_A_CHILD = ANSWER + """
    import os, time
    child = os.fork()
    if child == 0:
        time.sleep(300)  # keeps stdout open, in the retriever's process group
        os._exit(0)
    open("child.pid", "w").write(str(child))
"""


@pytest.mark.parametrize("ending, then", [
    ("crash", "line = sys.stdin.readline()\nsys.exit(3)\n"),
    ("hang", "line = sys.stdin.readline()\ntime.sleep(300)\n"),
    ("run end", "for line in sys.stdin:\n    answer(line)\n"),
])
def test_a_forked_child_never_outlives_the_run(tmp_path, ending, then):
    cwd = project(tmp_path, FORKS_A_CHILD + textwrap.indent(then, "    "), questions=2,
                  retriever="concurrency = 1\ntimeout = 2\n")

    done = run(cwd)

    assert done.returncode == (0 if ending == "run end" else 4), done.stderr
    child = int((cwd / "child.pid").read_text())
    for _ in range(50):  # SIGKILL is delivered at once; its reaping by init may lag a little
        if gone(child):
            break
        time.sleep(0.1)
    assert gone(child), f"the retriever's child {child} outlived ci-eval ({ending})"


def test_a_command_retriever_gets_the_environment_without_the_token(tmp_path):
    program = ANSWER + """
    import os
    open("env.json", "w").write(json.dumps(sorted(os.environ)))
    for line in sys.stdin:
        answer(line)
    """
    cwd = project(tmp_path, program, questions=1)
    secret = {"GITHUB_TOKEN": "ghs_x", "INPUT_GITHUB-TOKEN": "ghs_x", "INPUT_CONFIG": "c.toml",
              "GH_TOKEN": "ghs_x", "MY_INDEX_URL": "http://127.0.0.1:9"}

    done = run(cwd, env=secret)

    assert done.returncode == 0, done.stderr
    names = set(json.loads((cwd / "env.json").read_text()))
    assert names.isdisjoint({"GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "INPUT_CONFIG", "GH_TOKEN"})
    assert {"MY_INDEX_URL", "CI_EVAL_PARAMS", "PATH"} <= names


def test_terminating_ci_eval_ends_the_retrievers_group(tmp_path):
    # A cancelled job sends SIGTERM to ci-eval: the retriever and its child go with it.
    cwd = project(tmp_path, FORKS_A_CHILD + "    line = sys.stdin.readline()\n    time.sleep(300)\n",
                  questions=2, retriever="concurrency = 1\ntimeout = 100\n")
    full = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    ci_eval = subprocess.Popen([sys.executable, "-m", "ci_eval", "run", "--quiet", "--out", "run.json"],
                               cwd=cwd, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(300):  # until the retriever has forked its child
            if (cwd / "child.pid").exists() and (cwd / "child.pid").read_text():
                break
            time.sleep(0.1)
        child = int((cwd / "child.pid").read_text())
        ci_eval.terminate()
        ci_eval.wait(timeout=GUARD)
    finally:
        ci_eval.kill()
    for _ in range(50):
        if gone(child):
            break
        time.sleep(0.1)
    assert gone(child), "the retriever's child outlived a terminated ci-eval"
    assert not (cwd / "run.json").exists()  # nothing half-written
