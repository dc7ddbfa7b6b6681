"""ci-eval's own process runs numpy's OpenBLAS on one thread; the processes it starts see the
environment as the user set it (ci_eval/blas_threads.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from suite_paths import REPO_ROOT

from ci_eval.blas_threads import VARIABLE

# `ci-eval metrics` imports numpy and starts no thread of its own. Just before the process
# ends, the probe prints how many threads it has and whether numpy was imported.
_PROBE = """
import os, sys
import ci_eval.cli as cli
if sys.argv[1] == "off":
    cli.one_thread_here = lambda: None
end = cli._EXIT_NOW
def counted(code):
    print("threads", len(os.listdir("/proc/self/task")), "numpy" in sys.modules, flush=True)
    end(code)
cli._EXIT_NOW = counted
sys.argv[1:] = ["metrics"]
cli.main()
"""


def threads_of_ci_eval(switch: str, **env: str) -> tuple[int, bool]:
    full = {k: v for k, v in os.environ.items() if k != VARIABLE}
    done = subprocess.run([sys.executable, "-c", _PROBE, switch], capture_output=True, text=True, check=True,
                          env={**full, **env, "PYTHONPATH": str(REPO_ROOT)})
    _, count, imported = done.stdout.splitlines()[-1].split()
    return int(count), imported == "True"


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="threads are counted in /proc")
def test_the_process_imports_numpy_on_one_thread():
    assert threads_of_ci_eval("on") == (1, True)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="OpenBLAS starts a thread a core: only seen with /proc and two cores")
def test_without_it_openblas_starts_a_thread_per_core_and_a_user_s_number_is_kept():
    # what the setting prevents, seen on this machine: the probe above can fail
    assert threads_of_ci_eval("off")[0] > 1
    assert threads_of_ci_eval("on", **{VARIABLE: "2"})[0] == 2


RETRIEVER = """
    import json, os, sys
    open("seen.json", "w").write(json.dumps(os.environ.get("OPENBLAS_NUM_THREADS")))
    for line in sys.stdin:
        q = json.loads(line)
        print(json.dumps({"id": q["id"], "results": [{"id": "alpha", "score": 1.0}]}), flush=True)
"""


@pytest.mark.parametrize("users", [None, "3"])
def test_the_retriever_sees_the_environment_as_the_user_set_it(tmp_path, users):
    (tmp_path / "gold.json").write_text(json.dumps({"schema_version": 1, "questions": [
        {"id": "q1", "question": "alpha", "gold": ["alpha"]}]}))
    (tmp_path / "retriever.py").write_text(textwrap.dedent(RETRIEVER))
    (tmp_path / "ci-eval.toml").write_text('gold_set = "gold.json"\nk = 1\n[retriever]\ntype = "command"\n'
                                           f'command = [{json.dumps(sys.executable)}, "retriever.py"]\n')
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    if users is not None:
        env[VARIABLE] = users
    done = subprocess.run([sys.executable, "-m", "ci_eval", "run", "--quiet", "--out", "run.json"], cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(REPO_ROOT)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "seen.json").read_text()) == users
