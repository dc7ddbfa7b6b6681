"""Where the test suite's CPU goes: each Python process it starts, counted by kind.

    .venv/bin/python benchmarks/suite_processes.py                 # the whole suite, as README runs it
    .venv/bin/python benchmarks/suite_processes.py tests/github    # any pytest arguments

For the length of the run, a ``.pth`` line in the interpreter's site-packages makes every
Python process started from it write, as it exits (``atexit``, or ``os._exit``, which the
CLI and the workers end with), its CPU seconds and its command line to one log; the hook is
removed afterwards whatever happens. Processes killed by a signal (a retriever worker at
the end of its run, an index reader) write nothing, nor do non-Python ones (Chromium, uv,
bash, Node): their CPU is the difference between the whole run's (the children's rusage,
printed) and the sum of the table. The pytest workers' own line is the tests' in-process work.
"""

from __future__ import annotations

import collections
import os
import re
import resource
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_HOOK = '''import atexit, os, sys
_log = os.environ["SUITE_PROCESS_LOG"]


def _write():
    t = os.times()
    try:
        with open("/proc/self/cmdline", "rb") as f:
            cmd = f.read().replace(b"\\0", b" ").decode(errors="replace")[:300].replace("\\n", " ")
    except OSError:
        cmd = " ".join(sys.argv)[:300]
    test = os.environ.get("PYTEST_CURRENT_TEST", "-").split(" ")[0]
    with open(_log, "a") as f:
        f.write(f"{t.user + t.system:.3f}\\t{test}\\t{cmd}\\n")


_exit = os._exit


def _exit_written(code):
    _write()
    _exit(code)


atexit.register(_write)
os._exit = _exit_written
'''
_PTH = "import os; os.environ.get('SUITE_PROCESS_LOG') and __import__('_suite_processes_hook')\n"

# (kind, pattern of the command line), the first that matches names the process.
KINDS = (
    ("pytest workers (the tests' in-process work)", r"execnet|xdist"),
    ("pytest", r"-m pytest"),
    ("retriever worker (retrieval/worker_serve.py)", r"worker_serve"),
    ("index.callable (inputs/index_process.py)", r"index_process"),
    ("the action (action/entry.py)", r"entry\.py"),
)


def kind_of(test: str, cmd: str) -> str:
    for kind, pattern in KINDS:
        if re.search(pattern, cmd):
            return kind
    if test == "-" and " -c " in cmd:
        return KINDS[0][0]  # xdist's workers start as `python -c`
    command = re.search(r"(?:-m ci_eval|ci_eval/__main__\.py|bin/ci-eval) (\S+)", cmd)
    if command:
        return f"ci-eval {command.group(1)}"
    return "other Python (tests' helpers, retrievers)"


def main(argv: list[str]) -> int:
    site = Path(sysconfig.get_paths()["purelib"])
    hook, pth = site / "_suite_processes_hook.py", site / "zz_suite_processes.pth"
    args = argv or ["tests", "-q", "-n", "auto", "-p", "no:cacheprovider"]
    with tempfile.TemporaryDirectory(prefix="ci-eval-suite-") as tmp:
        log = Path(tmp) / "processes.tsv"
        log.touch()
        hook.write_text(_HOOK)
        pth.write_text(_PTH)
        try:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, check=False,
                                  env={**os.environ, "SUITE_PROCESS_LOG": str(log)})
            wall = time.perf_counter() - started
        finally:
            hook.unlink(missing_ok=True)
            pth.unlink(missing_ok=True)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu, count = collections.Counter(), collections.Counter()
        for line in log.read_text().splitlines():
            seconds, test, cmd = line.split("\t", 2)
            kind = kind_of(test, cmd)
            cpu[kind] += float(seconds)
            count[kind] += 1
    total = usage.ru_utime + usage.ru_stime
    print(f"\npytest exit {done.returncode}; wall {wall:.1f} s; CPU of everything it started {total:.1f} s; "
          f"load average at the end {os.getloadavg()[0]:.2f}")
    print(f"{'CPU s':>8} {'share':>6} {'processes':>9}  kind")
    for kind, seconds in cpu.most_common():
        print(f"{seconds:8.1f} {seconds / total:6.1%} {count[kind]:9d}  {kind}")
    rest = total - sum(cpu.values())
    print(f"{rest:8.1f} {rest / total:6.1%} {'':>9}  not counted: killed by a signal, or not Python")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
