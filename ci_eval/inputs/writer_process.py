"""A large artefact's rows encoded and written by a second process, on the machine's other core.

Encoding the rows as JSON (every score's float ``repr``) is about a quarter of a large run's
time. The run's process keeps the retriever, the scoring and the run's columns; it hands this
child each batch of rows in ``marshal``'s binary form (a tenth of the cost of encoding it) and
the child turns it into exactly the text core/artefact/artefact_writer.rows_piece makes in-process.
When the child falls behind (the other core busy), the run encodes the next batch itself.

The child is a fresh interpreter (``sys.executable``, no fork of a process whose retriever may
hold threads or locks), in a session of its own (the terminal's Ctrl-C reaches the run, which
stops it). It writes into the temporary file inputs/files.py opened (its descriptor passed
down); renaming it over the destination stays there, done only once the child says the
whole text is written.

Parent to child, on its stdin: frames of one kind byte and a 4-byte big-endian length, then
the payload: ``T`` a piece of text (UTF-8), ``F`` / ``R`` the first / a later batch of rows
(marshal), ``E`` the end. Child to parent, one line on its stdout once it stops: ``ok SIZE``,
``too-large SIZE``, ``os-error ERRNO STRERROR`` or ``failed WHAT``.
"""

from __future__ import annotations

import marshal
import os
import struct
import sys

_HEADER = struct.Struct(">cI")
_TEXT, _FIRST, _ROWS, _END = b"T", b"F", b"R", b"E"
_WRITE_BUFFER = 1 << 20


class Rows:
    """artefact_pieces' ``batch_piece`` for a child-written artefact: a batch of rows on its
    way to the child, and whether it is the first."""

    __slots__ = ("batch", "first")

    def __init__(self, batch: list, first: bool):
        self.batch = batch
        self.first = first


def available() -> bool:
    """A child can be started the way this module starts it: a POSIX system (a descriptor
    handed down, the pipe's fill read) and a known interpreter (not an embedded one)."""
    return os.name == "posix" and bool(sys.executable)


def _command(fd: int, limit: int | None) -> list[str]:
    # -I -S: no user site, no .pth files, no PYTHON* variables: the child imports only
    # ci_eval (from where the run's own copy is) and the standard library.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    boot = f"import sys; sys.path.insert(0, {root!r}); from ci_eval.inputs.writer_process import serve; serve()"
    return [sys.executable, "-I", "-S", "-c", boot, str(fd), "" if limit is None else str(limit)]


def write_in_child(fd: int, pieces, limit: int | None) -> int:
    """inputs/files.atomic_write_pieces' ``write`` through a child process: ``pieces`` (text,
    or Rows) written to ``fd``; the bytes written. Raises what the in-process writer raises
    (files.TooLarge past ``limit``, OSError for the disk), and OSError when the child dies;
    the child is stopped and reaped whatever happens, the parent's exception kept."""
    import subprocess

    child = subprocess.Popen(_command(fd, limit), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, pass_fds=(fd,), start_new_session=True)
    finished = False
    try:
        try:
            _send_all(child.stdin, pieces)
        except BrokenPipeError:
            pass  # the child stopped early: its line says why
        size = _outcome(child)
        finished = True
        return size
    finally:
        if not finished:
            _stop(child)


# A child this far behind (bytes it has not read yet) is short of a core: the run encodes the
# next batch itself, and the child only writes it, so neither waits long for the other.
_BEHIND = 256 * 1024
_PIPE_SIZE = 1 << 20


def _send_all(pipe, pieces) -> None:
    unread = _unread_counter(pipe)
    for piece in pieces:
        if not isinstance(piece, Rows):
            kind, data = _TEXT, piece.encode("utf-8") if isinstance(piece, str) else piece
        else:
            kind, data = _rows_frame(piece, unread() > _BEHIND)
        pipe.write(_HEADER.pack(kind, len(data)))
        pipe.write(data)
    pipe.write(_HEADER.pack(_END, 0))
    pipe.close()


def _rows_frame(rows: Rows, behind: bool) -> tuple[bytes, bytes]:
    """The batch as marshal bytes for the child to encode; its text made here when the child
    is behind, or when a value is of a type marshal does not carry (a subclass of float or
    str): the bytes never depend on the route."""
    from ci_eval.core.artefact.artefact_writer import rows_piece

    if not behind:
        try:
            return (_FIRST if rows.first else _ROWS), marshal.dumps(rows.batch)
        except ValueError:
            pass
    return _TEXT, rows_piece(rows.batch, rows.first).encode("utf-8")


def _unread_counter(pipe):
    """How many bytes written to ``pipe`` the child has not read yet (0 where the system
    cannot say); the pipe enlarged first where it can be, so a batch fits in it."""
    import array
    import fcntl
    import termios

    fd = pipe.fileno()
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    except (AttributeError, OSError):  # not Linux, or above the system's pipe-max-size
        pass
    count = array.array("i", [0])

    def unread() -> int:
        try:
            fcntl.ioctl(fd, termios.FIONREAD, count, True)
        except OSError:
            return 0
        return count[0]

    return unread


def _outcome(child) -> int:
    from ci_eval.inputs.files import TooLarge

    try:
        child.stdin.close()
    except BrokenPipeError:
        pass
    line = child.stdout.readline().decode("utf-8", "replace").rstrip("\n")
    child.stdout.close()
    code = child.wait()
    word, _, rest = line.partition(" ")
    if word == "ok" and code == 0:
        return int(rest)
    if word == "too-large":
        raise TooLarge(int(rest))
    if word == "os-error":
        number, _, strerror = rest.partition(" ")
        raise OSError(int(number), strerror)
    if word == "failed":
        raise OSError(0, f"the process writing it failed ({rest})")
    raise OSError(0, f"the process writing it {_ended(code)} before it was written")


def _ended(code: int) -> str:
    import signal

    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _stop(child) -> None:
    """Kill and reap the child, its pipes closed (no zombie, no descriptor left open)."""
    try:
        child.kill()
    except ProcessLookupError:
        pass
    for pipe in (child.stdin, child.stdout):
        try:
            pipe.close()
        except OSError:  # the stdin buffer's flush into a pipe nobody reads
            pass
    child.wait()


# The child's side.


def serve() -> None:
    """The child's main: frames from stdin written to the descriptor in argv[1], refusing
    past the limit in argv[2]; its one line of outcome on stdout."""
    import gc
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run decides when the writer stops
    gc.disable()  # rows hold no cycles; the collector would walk every batch for nothing
    fd, limit = int(sys.argv[1]), int(sys.argv[2]) if sys.argv[2] else None
    try:
        outcome = _serve(fd, limit)
    except OSError as exc:
        outcome = f"os-error {exc.errno or 0} {exc.strerror or exc}"
    except Exception as exc:  # one line to the run, which words it for the user
        outcome = f"failed {type(exc).__name__}: {exc}"
    if outcome is not None:
        os.write(1, (" ".join(outcome.split()) + "\n").encode("utf-8", "replace"))


def _serve(fd: int, limit: int | None) -> str | None:
    from ci_eval.core.artefact.artefact_writer import rows_piece

    source = os.fdopen(0, "rb", buffering=_WRITE_BUFFER)
    size = 0
    with os.fdopen(fd, "wb", buffering=_WRITE_BUFFER) as out:
        while True:
            header = source.read(_HEADER.size)
            if len(header) < _HEADER.size:
                return None  # the run stopped without an end: it has its own reason
            kind, length = _HEADER.unpack(header)
            if kind == _END:
                out.flush()
                return f"ok {size}"
            data = source.read(length)
            if kind != _TEXT:
                data = rows_piece(marshal.loads(data), kind == _FIRST).encode("utf-8")
            size += len(data)
            if limit is not None and size > limit:
                return f"too-large {size}"
            out.write(data)
