"""The token handed to the one process that talks to GitHub, where no child can read it back.

A process's ``/proc/PID/environ`` is the environment block it was started with: a variable
removed from ``os.environ`` later stays there, readable by every process of the same user,
the retriever's among them (it is the user's code, and a command retriever can read its
parent's and every ancestor's block). So a process that finds the token in its environment
replaces itself (``execve``: the same process id, a new block) by the same program with an
environment holding no name the token comes under and no value holding the token; the token
goes on a pipe whose read end the new program inherits, named by ``CI_EVAL_TOKEN_FD``. ci-eval
reads that pipe once and closes it before any user code runs (take_handed_token),
which leaves the pipe empty, its writer gone.

Two places apply it, so the rule holds however ci-eval is started:
- action.yml's Run step starts ``action/entry.py --hand-over bash action/run.sh``: the shell
  that waits for ci-eval, the parent of its processes, starts without the token;
- ``ci-eval action`` itself, when started with the token in its environment (a run by hand
  with ``INPUT_GITHUB-TOKEN``, a job-level ``GITHUB_TOKEN``, another launcher), re-executes
  itself before it reads anything else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

TOKEN_FD = "CI_EVAL_TOKEN_FD"
# The token in every spelling the runner and the action give it. This module imports nothing
# of ci_eval's: the Run step's hand-over starts an interpreter for it alone, before ci-eval.
SECRET_NAMES = frozenset({"GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN",
                          "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "CI_EVAL_TOKEN"})
# The names the token comes under, the action's spelling of its input among them; the
# action's other inputs (INPUT_CONFIG...) stay, ci-eval reads them after the exec.
CARRIERS = SECRET_NAMES | {"INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN"}
# Where the token to hand on is taken from, first found first: the Run step's variable, the
# action's input as GitHub would spell it, the job's token.
SOURCES = ("CI_EVAL_TOKEN", "INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN", "GITHUB_TOKEN")
# A token is tens of bytes; the pipe must hold it whole before anyone reads it (64 KiB on
# Linux, 16 KiB the least a POSIX system gives).
MAX_TOKEN_BYTES = 16 * 1024
# A value is searched for the token only when the token is long enough to mean something.
MIN_SEARCHED = 8


def carries_token(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` holds a variable the token comes under."""
    return any(name.upper() in CARRIERS for name in environ)


def clean_environment(environ: Mapping[str, str], token: str | None) -> dict[str, str]:
    """``environ`` without the token's names, without any value holding ``token`` (a copy
    the workflow made under a name of its own) and without a stale descriptor number."""
    def holds(value: str) -> bool:
        return bool(token) and len(token) >= MIN_SEARCHED and token in value

    return {k: v for k, v in environ.items()
            if k.upper() not in CARRIERS and k != TOKEN_FD and not holds(v)}


def take_handed_token(env: Mapping[str, str]) -> str | None:
    """The token handed over on the descriptor named by ``CI_EVAL_TOKEN_FD``
    (never in an environment variable, where the retriever's processes could read it from
    /proc/PID/environ); the descriptor is closed once read, so no child inherits it. None
    when no descriptor was named (``ci-eval action`` run by hand with INPUT_GITHUB-TOKEN)."""
    from ci_eval.errors import InputError

    text = env.get(TOKEN_FD, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 3:
        raise InputError(f"must be a file descriptor number from 3 up, got {text[:20]!r}", "CI_EVAL_TOKEN_FD")
    fd = int(text)
    chunks = []
    try:
        while len(chunks) < 64:  # a token is a few dozen bytes; a runaway writer is cut off
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError as exc:
        raise InputError(f"cannot read the token from descriptor {fd}: {exc.strerror}", "CI_EVAL_TOKEN_FD") from None
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    return b"".join(chunks).decode("utf-8", "replace").strip() or None


def _token(environ: Mapping[str, str]) -> str | None:
    if environ.get(TOKEN_FD):  # handed over already (and the job set a token too): read it
        handed = take_handed_token(environ)
        if handed:
            return handed
    return next((environ[name].strip() for name in SOURCES if (environ.get(name) or "").strip()), None)


def exec_without_token(argv: Sequence[str], environ: Mapping[str, str], always: bool = False) -> None:
    """Replace this process by ``argv`` (looked up on PATH), its environment without the
    token, the token on an inherited pipe named by ``CI_EVAL_TOKEN_FD``. Returns only when
    ``environ`` carries no token and ``always`` is false (nothing to take out: go on as is)."""
    if os.name != "posix" or not (always or carries_token(environ)):
        # Windows has no /proc to read another process's block from, and no exec that
        # keeps the process.
        return
    token = _token(environ) if carries_token(environ) or environ.get(TOKEN_FD) else None
    clean = clean_environment(environ, token)
    if token:
        data = token.encode("utf-8", "surrogateescape")
        if len(data) > MAX_TOKEN_BYTES:
            from ci_eval.errors import InputError

            raise InputError(f"is {len(data)} bytes, over {MAX_TOKEN_BYTES}: not a token", "input github-token")
        read_end, write_end = os.pipe()
        try:
            while data:
                data = data[os.write(write_end, data):]
        finally:
            os.close(write_end)  # the reader sees the token, then the end of it
        os.set_inheritable(read_end, True)
        clean[TOKEN_FD] = str(read_end)
    os.execvpe(argv[0], list(argv), clean)
