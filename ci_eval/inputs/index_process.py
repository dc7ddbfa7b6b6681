"""The user's ``index.callable``, called in a process of its own.

In the action, ci-eval's process holds the GitHub token in its memory once it has read it
from its descriptor (github/token_handover.take_handed_token), and the user's code run there could find
it (``/proc/self/mem``, or the objects of the GitHub client). So the callable runs in a
fresh interpreter, as the python retriever does (retrieval/worker.py): started with the
environment minus the token and the action's inputs (github/env.without_secrets), in a
session of its own, its group and whatever carries its mark killed once it has answered.

Protocol: the first line on the child's stdin is the parent's import path (JSON), the rest
the request (JSON: the target, where it was configured, the config's folder, ``[index]
params``, passed as keyword arguments). The child's
stdout is the protocol's alone (the user's prints go to stderr): one JSON object,
``{"value": ...}`` (what the callable returned, sets and tuples as lists) or
``{"error": {"message", "source", "place"}}`` (a bad target, or the callable raised or
exited: the same one line as when it ran in ci-eval's process). What comes back is checked
by the same reader as a manifest file (inputs/manifest.manifest_from_value).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from ci_eval.errors import InputError

PLACE = "index.callable"
# The child imports ci_eval from where this process did, then takes this process's path
# (as retrieval/worker.py's child does, for the same reason).
_BOOT = ("import json, os, sys; line = sys.stdin.buffer.readline(); line or os._exit(0); "
         "path, root = json.loads(line); sys.path.insert(0, root); "
         "from ci_eval.inputs.index_process import serve; sys.path[:] = path; serve()")
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Stands where the callable returned something JSON cannot hold: a dict where the reader
# expects a string or a list, so it is refused at its place like any other wrong value.
_UNENCODABLE = "\0not a JSON value"


# Each request's reply, once it has been answered: a sweep loads every row's inputs and the
# demo plans its remap from both indexes it runs, so the user's callable, which may list a
# whole vector store, was called once a row that shares it (four times in the demo). The
# index does not change within one command.
_REPLIES: dict[bytes, bytes] = {}


def call_index(config):
    """What ``config``'s index.callable returned, called in a process of its own (once a
    command for the same target, folder and params); an InputError at ``index.callable``
    when it cannot be imported, raises or exits."""
    request = {"spec": config.manifest_callable, "source": config.source, "base_dir": config.base_dir,
               "params": config.index_params}
    payload = (json.dumps([sys.path, _ROOT]) + "\n" + json.dumps(request)).encode("utf-8", "surrogatepass")
    out, code = _REPLIES.get(payload), 0
    if out is None:
        out, code = _called_in_child(payload)
    try:
        reply = json.loads(out)
    except (ValueError, RecursionError):
        reply = None
    if isinstance(reply, dict) and "value" in reply:
        _REPLIES[payload] = out
        return reply["value"]
    error = reply.get("error") if isinstance(reply, dict) else None
    if isinstance(error, dict) and all(isinstance(error.get(k), str) for k in ("message", "source", "place")):
        raise InputError(error["message"], error["source"], error["place"])
    raise InputError(f"index.callable: its process ended (exit code {code}) without an answer",
                     config.source, PLACE)


def _called_in_child(payload: bytes) -> tuple[bytes, int]:
    """The child's stdout and exit code, given ``payload`` (the import path, the request)."""
    from ci_eval.github.env import without_secrets
    from ci_eval.retrieval.process_marks import MARK, kill_marked, new_mark

    mark = new_mark()
    proc = subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env={**without_secrets(os.environ), MARK: mark}, start_new_session=True)
    try:
        out, _ = proc.communicate(payload)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        kill_marked(mark)
    return out, proc.returncode


def _plain(value):
    if isinstance(value, (set, frozenset)):
        return list(value)
    return {_UNENCODABLE: type(value).__name__}


def serve() -> None:
    """The child's side: import the target, call it, send what it returned."""
    protocol = os.dup(1)
    os.dup2(2, 1)
    request = json.loads(sys.stdin.buffer.read())
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    source = request["source"]
    try:
        reply = {"value": _called(request["spec"], source, request["base_dir"], request.get("params") or {})}
        try:
            text = json.dumps(reply, default=_plain)
        except (ValueError, TypeError, RecursionError) as exc:
            text = json.dumps({"error": {"message": f"index.callable returned a value that cannot be read ({exc})",
                                         "source": source, "place": PLACE}})
    except InputError as exc:
        text = json.dumps({"error": {"message": exc.message, "source": exc.source or source,
                                     "place": exc.place or PLACE}})
    data = memoryview(text.encode("utf-8", "surrogatepass"))
    sys.stdout.flush()
    sys.stderr.flush()
    while data:
        data = data[os.write(protocol, data):]
    os._exit(0)  # nothing of the user's (atexit handlers, non-daemon threads) runs after this


def _called(spec: str, source: str, base_dir, params: dict):
    from ci_eval.inputs.pyimport import ImportFailed, describe_failure, import_target, os_exit_raises

    try:
        fn = import_target(spec, source, PLACE, base_dir)
    except ImportFailed as exc:
        raise exc.as_input_error() from None
    try:
        with os_exit_raises():
            return fn(**params)  # [index] params: how this row's index is cut
    except BaseException as exc:  # noqa: BLE001 - the user's code, incl. sys.exit
        raise InputError(f"index.callable {describe_failure(exc)}", source, PLACE) from None
