"""Reading users' files with errors that name the file and the line, and writing atomically."""

from __future__ import annotations

import json
import math
import os
import re
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ci_eval.core.text import LONE_SURROGATE
from ci_eval.errors import InputError

# Generous for any hand-made gold set or config; a cap so a wrong path (a 4 GB dump) fails
# fast with a message instead of exhausting memory.
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
_READ_CHUNK = 1 << 20


def file_kind(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: str | os.PathLike, what: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """A regular file's bytes, at most ``max_bytes`` of them."""
    return b"".join(read_blocks(path, what, max_bytes))


def read_blocks(path: str | os.PathLike, what: str, max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[bytes]:
    """A regular file's bytes a block at a time, at most ``max_bytes`` of them. Opened
    without blocking (a FIFO would wait for a writer forever) and read up to the cap
    whatever ``st_size`` says (a /proc file says 0, a file may grow while it is read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(f"{what} not found", str(path)) from None
    except PermissionError:
        raise InputError(f"{what} is not readable (permission denied)", str(path)) from None
    except IsADirectoryError:
        raise InputError(f"{what} is a folder, not a file", str(path)) from None
    except OSError as exc:
        raise InputError(f"{what} could not be read: {exc.strerror}", str(path)) from None
    try:
        info = os.fstat(fd)
        kind = file_kind(info.st_mode)
        if kind is not None:
            raise InputError(f"{what} is {kind}, not a file", str(path))
        if info.st_size > max_bytes:  # a wrong path (a 4 GB dump) fails before any read
            raise InputError(f"{what} is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit", str(path))
        size = 0
        while True:
            chunk = os.read(fd, min(_READ_CHUNK, max_bytes + 1 - size))
            if not chunk:
                return
            size += len(chunk)
            if size > max_bytes:
                raise InputError(f"{what} is over the {max_bytes:,}-byte limit", str(path))
            yield chunk
    except IsADirectoryError:
        raise InputError(f"{what} is a folder, not a file", str(path)) from None
    except OSError as exc:
        raise InputError(f"{what} could not be read: {exc.strerror}", str(path)) from None
    finally:
        os.close(fd)


def decode(raw: bytes, source: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError("not valid UTF-8", source, f"line {line}") from None
    return text[1:] if text.startswith("\ufeff") else text


def finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):  # 1e999 parses as inf; find its place on the slow path
        raise ValueError("overflow")
    return value


class _RepeatedKey:
    """Stands in for an object that holds a key twice (json keeps the last silently)."""

    __slots__ = ("key",)

    def __init__(self, key: str):
        self.key = key


def repeat_noting_hook(found: list):
    """An ``object_pairs_hook`` that leaves a _RepeatedKey where an object repeats a key
    and notes in ``found`` that one exists (so valid documents are never walked)."""

    def build(pairs: list) -> Any:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        seen: set = set()
        found.append(True)
        return _RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))

    return build


def _raise_repeated_key(data: Any, source: str) -> None:
    from ci_eval.core.validate import json_path

    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, _RepeatedKey):
            raise InputError(f"invalid JSON: the key {node.key!r} appears twice in one object",
                             source, json_path(path))
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))


def parse_json(text: str, source: str) -> Any:
    repeated: list = []
    try:
        data = json.loads(text, parse_constant=reject_constant, parse_float=finite_float,
                          object_pairs_hook=repeat_noting_hook(repeated))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", source, f"line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        _raise_unrepresentable(text, source)
        raise InputError(f"invalid JSON: {exc}", source) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", source) from None
    if repeated:
        _raise_repeated_key(data, source)
    # "\ud800" alone is valid JSON but no character: it could never be written back as UTF-8.
    if SURROGATE_ESCAPE_RE.search(text):
        reject_lone_surrogates(data, source)
    return data


def json_lines(text: str, source: str) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of a JSON-lines text; the value is
    an InputError naming the line when the line is not JSON, repeats a key in one object or
    nests too deeply (callers report every bad line at once, or the first). Lines end at
    ``\n`` only: U+2028 or U+0085 inside a string is text, and line numbers stay true.
    NaN and Infinity parse here: a run file's reader names the result that holds one."""
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        repeated: list = []
        try:
            value = json.loads(line, object_pairs_hook=repeat_noting_hook(repeated))
        except RecursionError:
            yield n, InputError("invalid JSON: nested too deeply", source, f"line {n}")
            continue
        except json.JSONDecodeError as exc:  # the line is the document: name its column
            yield n, InputError(f"invalid JSON: {exc.msg}", source, f"line {n} column {exc.colno}")
            continue
        except ValueError as exc:
            yield n, InputError(f"invalid JSON: {exc}", source, f"line {n}")
            continue
        if repeated:
            try:
                _raise_repeated_key(value, source)
            except InputError as exc:
                where = "" if exc.place == "(top level)" else f" (at {exc.place})"
                value = InputError(exc.message + where, source, f"line {n}")
        yield n, value


def read_json_lines(path: str, what: str) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of a JSON-lines file, stopping at
    the first bad line with its error (for readers that report one problem a file)."""
    for n, value in json_lines(decode(read_bytes(path, what), path), path):
        if isinstance(value, InputError):
            raise value
        yield n, value


SURROGATE_ESCAPE = r"\\u[dD][89a-fA-F]"
SURROGATE_ESCAPE_RE = re.compile(SURROGATE_ESCAPE)


def reject_lone_surrogates(data: Any, source: str) -> None:
    """Refuse a string (or key) holding half of a surrogate pair, naming its JSON path."""
    from ci_eval.core.validate import json_path

    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str) and LONE_SURROGATE.search(node):
            raise InputError("invalid JSON: a \\ud800-\\udfff escape without its pair is not a character",
                             source, json_path(path))
        if isinstance(node, dict):
            for k, v in reversed(list(node.items())):
                if LONE_SURROGATE.search(k):
                    raise InputError("invalid JSON: a key holds a \\ud800-\\udfff escape without its pair",
                                     source, json_path(path))
                stack.append(((*path, k), v))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))


class _Unrepresentable:
    """Stands in for a value JSON allows but Python's numbers and ours do not."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


def _constant(name: str) -> _Unrepresentable:
    return _Unrepresentable(f"{name} is not allowed")


def _float(token: str):
    value = float(token)
    if math.isfinite(value):
        return value
    return _Unrepresentable(f"the number {_clip(token)} is too large")


def _int(token: str):
    try:
        return int(token)
    except ValueError:  # over sys.get_int_max_str_digits()
        return _Unrepresentable(f"the number {_clip(token)} ({len(token)} digits) is too large")


def _clip(token: str) -> str:
    return token if len(token) <= 24 else f"{token[:10]}...{token[-4:]}"


def _raise_unrepresentable(text: str, source: str) -> None:
    """Parse again with stand-ins for NaN, Infinity and overflowing numbers; name the JSON
    path of the first one."""
    from ci_eval.core.validate import json_path

    try:
        data = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:  # past the NaN, the text is broken too
        raise InputError(f"invalid JSON: {exc.msg}", source, f"line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", source) from None
    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, _Unrepresentable):
            raise InputError(f"invalid JSON: {node.message}", source, json_path(path))
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))


def reject_constant(name: str):
    """A ``parse_constant`` that refuses NaN and Infinity (json accepts them by default)."""
    raise ValueError(f"{name} is not allowed")


def read_json(path, what: str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[Any, bytes]:
    raw = read_bytes(path, what, max_bytes)
    return parse_json(decode(raw, str(path)), str(path)), raw


def read_toml(path, what: str) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    raw = read_bytes(path, what, 16 * 1024 * 1024)
    text = decode(raw, str(path))
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise InputError("invalid TOML: nested too deeply", str(path)) from None
    except ValueError as exc:
        if not isinstance(exc, tomllib.TOMLDecodeError):  # an integer too long to convert
            long_number = re.search(r"\d{1000}", text)
            line = text.count("\n", 0, long_number.start()) + 1 if long_number else None
            raise InputError("invalid TOML: a number is too long", str(path), line and f"line {line}") from None
        msg = str(exc)
        # "Expected '=' after a key (at line 3, column 5)" -> place it the way every error is.
        place = None
        if "(at line " in msg:
            msg, _, rest = msg.rpartition(" (at ")
            place = rest.rstrip(")")
        raise InputError(f"invalid TOML: {msg}", str(path), place) from None


def _output_target(path: str | os.PathLike) -> Path:
    """Where writing ``path`` lands: a symlink's target (the link itself is kept). Anything
    there but a regular file is refused, never replaced: ``--out /dev/full`` must not turn
    a device node into a file, nor a FIFO or a folder be swapped for one."""
    target = Path(os.path.realpath(path))
    try:
        kind = file_kind(os.stat(target).st_mode)
    except FileNotFoundError:
        return target
    except NotADirectoryError:
        raise InputError(f"cannot be written: {_existing_folder(target)} is a file, not a folder",
                         str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot be written: {exc.strerror}", str(path)) from None
    if kind is not None:
        raise InputError(f"is {kind}, not a file: refusing to replace it", str(path))
    return target


def _existing_folder(target: Path) -> Path:
    """The nearest ancestor of ``target`` that exists (where mkdir would start); it may
    be a file, which is what callers look for."""
    folder = target.parent
    while not (folder.exists() or folder.is_symlink()) and folder != folder.parent:
        folder = folder.parent
    return folder


def check_writable(path: str | os.PathLike) -> None:
    """Fail now, naming the path, if writing ``path`` later would fail: called before the
    retriever runs, so a typo in ``--out`` does not cost the whole run."""
    folder = _existing_folder(_output_target(path))
    if not folder.is_dir():
        raise InputError(f"cannot be written: {folder} is a file, not a folder", str(path))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"cannot be written: the folder {folder} is not writable", str(path))


_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    # Linux says it in /proc without changing it; elsewhere os.umask can only be read by
    # setting it, and the lock keeps two writers of this process from racing.
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _new_file_mode() -> int:
    return 0o666 & ~_umask()


_TMP = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.[a-z0-9_]+\.tmp")


def _remove_stale_temporaries(folder: Path, name: str) -> None:
    """A run killed mid-write leaves ``.NAME.PID.xxxx.tmp``; the next write to NAME removes
    those whose process is gone (a live one may be another writer at work)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        m = _TMP.fullmatch(entry.name)
        if not m or m["name"] != name or int(m["pid"]) == os.getpid() or _alive(int(m["pid"])):
            continue
        try:
            os.unlink(entry.path)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def atomic_write(path: str | os.PathLike, data: str | bytes) -> None:
    """Write to a temporary file beside the target, then rename over it: a reader (or an
    interrupted run) sees the previous file or the new one, never half of one. Through a
    symlink the target is written; the file gets the mode the umask gives a new file (or
    keeps the one it had)."""
    atomic_write_pieces(path, [data.encode("utf-8") if isinstance(data, str) else data])


class TooLarge(Exception):
    """Raised by ``atomic_write_pieces`` when the pieces pass ``limit`` bytes."""

    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


def atomic_write_pieces(path: str | os.PathLike, pieces: Iterable, limit: int | None = None) -> int:
    """``atomic_write`` of text that arrives a piece at a time (a run's rows as they are
    measured), gathered into large writes. Past ``limit`` bytes the temporary file is
    removed and TooLarge raised: nothing is left half-written. Returns the bytes written."""
    p = _output_target(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(os.stat(p).st_mode)
        except FileNotFoundError:
            mode = _new_file_mode()
        _remove_stale_temporaries(p.parent, p.name)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{os.getpid()}.", suffix=".tmp", dir=p.parent)
    except (FileExistsError, NotADirectoryError):
        raise InputError("cannot be written: a folder on its path is a file", str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot be written: {exc.strerror}", str(path)) from None
    try:
        with os.fdopen(fd, "wb", buffering=0):  # closes fd whatever happens
            os.fchmod(fd, mode)
            size = _write_buffered(fd, pieces, limit)
            os.fsync(fd)
        os.replace(tmp, p)
        return size
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise InputError(f"could not be written: {exc.strerror or exc}", str(path)) from None
        raise


_WRITE_BUFFER = 1 << 20


def _write_buffered(fd: int, pieces: Iterable[str | bytes], limit: int | None) -> int:
    with os.fdopen(fd, "wb", buffering=_WRITE_BUFFER, closefd=False) as fh:
        return _write_all(fh, pieces, limit)


def _write_all(fh, pieces: Iterable[str | bytes], limit: int | None) -> int:
    size = 0
    for piece in pieces:
        data = piece.encode("utf-8") if isinstance(piece, str) else piece
        size += len(data)
        if limit is not None and size > limit:
            raise TooLarge(size)
        fh.write(data)
    return size


def atomic_append(path: str | os.PathLike, text: str) -> None:
    """GITHUB_OUTPUT and GITHUB_STEP_SUMMARY are appended to by every step: rewrite the whole
    file atomically with our part added, so a crash never leaves half of our part."""
    p = _output_target(path)
    before = read_bytes(p, "file") if p.exists() else b""
    atomic_write(path, before + text.encode("utf-8"))
