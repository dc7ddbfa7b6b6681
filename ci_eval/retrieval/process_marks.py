"""Finding every process a retriever started, even one that left its process group.

A retriever runs in a process group of its own, and the group is killed when the run ends;
but a child that calls ``setsid()`` (a daemon's double fork) leaves the group, and killing
the group misses it. Each retriever process is started with a mark in its environment,
which its descendants inherit, and the processes still carrying it are found by reading
``/proc/PID/environ`` (the environment each process was started with: a child cannot drop
the mark by changing its own ``os.environ``). Linux only; elsewhere nothing is found.
"""

from __future__ import annotations

import os
import secrets
import signal

MARK = "CI_EVAL_RETRIEVER_MARK"


def new_mark() -> str:
    return secrets.token_hex(16)


def marked(mark: str) -> list[int]:
    """The processes (other than this one) started with ``MARK=mark`` in their environment."""
    needle = f"{MARK}={mark}".encode()
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    me = os.getpid()
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                block = fh.read()
        except OSError:
            continue  # gone, or another user's
        if needle in block.split(b"\0"):
            found.append(int(name))
    return found


def kill_marked(mark: str) -> None:
    """SIGKILL every process still carrying ``mark``."""
    for pid in marked(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
