"""Nothing a retriever starts outlives the run, not even a child that left the retriever's
process group with setsid() (retrieval/process_marks.py): real retrievers through the real CLI."""

from __future__ import annotations

import os
import sys
import time

import pytest
from projects import GOOD_RETRIEVER, cli, write_config, write_gold, write_module, write_script

# A daemon's double fork: the grandchild calls setsid(), so it is in no group of the
# retriever's, writes its pid (whole, by a rename) and sleeps for an hour. The retriever
# goes on only once the pid is written: on a loaded machine the run could otherwise end,
# and end the daemon, before the test learns which process to look for.
DAEMON = """
import os, time

def start_daemon(pid_file):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pid_file + ".part", "w") as fh:
                fh.write(str(os.getpid()))
            os.replace(pid_file + ".part", pid_file)
            time.sleep(3600)
        os._exit(0)
    deadline = time.monotonic() + 30
    while not os.path.exists(pid_file) and time.monotonic() < deadline:
        time.sleep(0.01)
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its parent's wait is left


def wait_for(path, seconds: float = 10.0) -> int:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="read through /proc")
@pytest.mark.parametrize("kind", ["command", "python"])
def test_a_setsid_grandchild_of_the_retriever_is_ended_with_the_run(tmp_path, kind):
    pid_file = tmp_path / "daemon.pid"
    write_gold(tmp_path)
    if kind == "command":
        write_script(tmp_path, "retriever", DAEMON + f"""
import json, sys
start_daemon({str(pid_file)!r})
for line in sys.stdin:
    q = json.loads(line)
    print(json.dumps({{"id": q["id"], "results": [{{"id": "c1", "score": 1.0}}]}}), flush=True)
""")
        write_config(tmp_path, 'type = "command"\ncommand = ["./retriever"]\n')
    else:
        write_module(tmp_path, "retriever", DAEMON + f"start_daemon({str(pid_file)!r})\n" + GOOD_RETRIEVER)
        write_config(tmp_path, 'type = "python"\ntarget = "retriever:search"\n')
    done = cli("run", "--out", "run.json", "--quiet", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    pid = wait_for(pid_file)
    end = time.monotonic() + 5
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    try:
        assert not alive(pid), "the retriever's daemon outlived the run"
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
