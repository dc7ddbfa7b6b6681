"""Reading users' files with errors that name the file and the line, and writing atomically."""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ci_eval.errors import InputError

# Generous for any hand-made gold set or config; a cap so a wrong path (a 4 GB dump) fails
# fast with a message instead of exhausting memory.
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


def read_bytes(path: str | os.PathLike, what: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    p = Path(path)
    try:
        size = p.stat().st_size
        if p.is_dir():
            raise InputError(f"{what} is a folder, not a file", str(path))
        if size > max_bytes:
            raise InputError(f"{what} is {size:,} bytes, over the {max_bytes:,}-byte limit", str(path))
        return p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} not found", str(path)) from None
    except PermissionError:
        raise InputError(f"{what} is not readable (permission denied)", str(path)) from None
    except IsADirectoryError:
        raise InputError(f"{what} is a folder, not a file", str(path)) from None
    except OSError as exc:
        raise InputError(f"{what} could not be read: {exc.strerror}", str(path)) from None


def decode(raw: bytes, source: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError("not valid UTF-8", source, f"line {line}") from None
    return text[1:] if text.startswith("\ufeff") else text


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):  # 1e999 parses as inf; find its place on the slow path
        raise ValueError("overflow")
    return value


def parse_json(text: str, source: str) -> Any:
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", source, f"line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        _raise_unrepresentable(text, source)
        raise InputError(f"invalid JSON: {exc}", source) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", source) from None
    # "\ud800" alone is valid JSON but no character: it could never be written back as UTF-8.
    if _SURROGATE_ESCAPE.search(text):
        _reject_lone_surrogates(data, source)
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _reject_lone_surrogates(data: Any, source: str) -> None:
    from ci_eval.core.validate import json_path

    stack: list[tuple[tuple, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str) and _LONE_SURROGATE.search(node):
            raise InputError("invalid JSON: a \\ud800-\\udfff escape without its pair is not a character",
                             source, json_path(path))
        if isinstance(node, dict):
            for k, v in reversed(list(node.items())):
                if _LONE_SURROGATE.search(k):
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


def _reject_constant(name: str):
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


def atomic_write(path: str | os.PathLike, data: str | bytes) -> None:
    """Write to a temporary file beside the target, then rename over it: a reader (or an
    interrupted run) sees the previous file or the new one, never half of one."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_append(path: str | os.PathLike, text: str) -> None:
    """GITHUB_OUTPUT and GITHUB_STEP_SUMMARY are appended to by every step: rewrite the whole
    file atomically with our part added, so a crash never leaves half of our part."""
    p = Path(path)
    before = p.read_bytes() if p.exists() else b""
    atomic_write(p, before + text.encode("utf-8"))
