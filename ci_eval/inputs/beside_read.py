"""A downloaded run artefact parsed by a second interpreter, on the machine's other core.

The action looks its baseline up on a thread while the retriever runs. Parsing a large
artefact is Python work that holds the interpreter's lock (about 1.8 s at 100,000
questions), so on that thread it slows the evaluation by about as much. From
``BESIDE_FROM`` bytes the parse goes to a fresh interpreter instead (``sys.executable -I
-S``: never a fork of a process whose retriever holds threads and locks), sent the bytes on
its stdin. It answers on its stdout with the typed ``Artefact`` pickled, or the
``InputError`` the parse raised (inputs/pickled.py), and the thread waits for it without
holding the lock.

It only ever steps aside: a child that cannot start, exits with an error, takes too long or
answers with something that does not unpickle leaves the parse to this process, as before,
so the artefact, the error and any bug's traceback are the in-process parse's. The child
runs in its own session (a Ctrl-C at the terminal reaches the action, not it); if the action
exits first, the child's answer meets a closed pipe and it exits.
"""

from __future__ import annotations

import os
import subprocess
import sys

from ci_eval.core.artefact import Artefact
from ci_eval.errors import InputError
from ci_eval.inputs.artefact_file import run_from_bytes
from ci_eval.inputs.pickled import ARTEFACT, ERROR, artefact_frame, error_frame, unpickled

# Below this, a child's start (the interpreter and numpy, about 0.15 s) costs about what the
# parse it takes off the thread would: about 16,000 questions at depth 15.
BESIDE_FROM = 8 * 1024 * 1024
# The child's parse may take this long, plus a second per this many bytes, before it is
# taken to be stuck and the parse is done here.
STUCK_SECONDS, STUCK_BYTES_A_SECOND = 30.0, 5_000_000


def run_from_bytes_beside(raw: bytes, source: str) -> Artefact:
    """``run_from_bytes(raw, source)``, parsed by a second interpreter where that is
    possible and worth it (module doc); raises the ``InputError`` that parse raises."""
    if len(raw) >= BESIDE_FROM and possible():
        parsed = _in_child(raw, source)
        if parsed is not None:
            return parsed
    return run_from_bytes(raw, source)


def possible() -> bool:
    """A POSIX system, a known interpreter and two usable CPUs."""
    if os.name != "posix" or not sys.executable:
        return False
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    return len(cpus) >= 2


def _command(source: str) -> list[str]:
    # -I -S: no PYTHON* variables, no .pth files run again. The standard library stays first
    # (a project folder the retriever's import put on this process's path cannot shadow
    # it); then this process's own path, so ci_eval and numpy are found where it found them.
    boot = (f"import sys; sys.path += [p for p in {sys.path!r} if p not in sys.path]; "
            "from ci_eval.inputs.beside_read import serve; serve()")
    return [sys.executable, "-I", "-S", "-c", boot, source]


def _in_child(raw: bytes, source: str) -> Artefact | None:
    """The artefact the child parsed, None when it stepped aside; raises its InputError."""
    try:
        child = subprocess.Popen(_command(source), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:  # no process to be had
        return None
    try:
        answer, _ = child.communicate(raw, timeout=STUCK_SECONDS + len(raw) / STUCK_BYTES_A_SECOND)
    except (subprocess.TimeoutExpired, OSError):
        return None
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if child.returncode != 0 or answer[:1] not in (ARTEFACT, ERROR):
        return None
    try:
        sent = unpickled(answer[1:])
    except Exception:  # whatever does not unpickle is parsed again here
        return None
    if answer[:1] == ERROR and isinstance(sent, InputError):
        raise sent
    return sent if isinstance(sent, Artefact) else None


def serve() -> None:
    """The child: parse the bytes on stdin as ``run_from_bytes`` does, answer on stdout.
    Any other exception exits non-zero, and the parent parses the bytes itself."""
    raw = sys.stdin.buffer.read()
    try:
        artefact = run_from_bytes(raw, sys.argv[1])
        artefact.columns.done_reading()  # the id map is not sent: no later read shares it
        answer = artefact_frame(artefact)
    except InputError as exc:
        answer = error_frame(exc)
    sys.stdout.buffer.write(answer)
    sys.stdout.buffer.flush()
