"""``json.dumps(value, sort_keys=True, indent=n, ensure_ascii=False)``, the same bytes,
written faster for the shapes a report has.

With an indent the standard library leaves its C encoder and walks the value through nested
Python generators, one step per item: about half of writing a 100,000-question JSON report.
Here a container of plain values (strings, numbers, booleans, None) is written as one join
over its items, each string escaped by json's own C routine and each number by the repr json
uses; only containers of containers recurse. Anything else (a key that is not a string, a
value of another type, nesting deep enough to exhaust the stack) is left to ``json.dumps``
itself for the whole value, so the text is always what it would write.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring

_INF = float("inf")
_PLAIN = (str, int, float, type(None))  # bool is an int


class _Unusual(Exception):
    """A value this writer leaves to json.dumps."""


def _float(x: float) -> str:
    if x != x:
        return "NaN"
    if x == _INF:
        return "Infinity"
    if x == -_INF:
        return "-Infinity"
    return float.__repr__(x)


def _finite(x: float) -> str:
    """A float with NaN and the infinities written as null (``render_json``'s cleaning)."""
    return float.__repr__(x) if x - x == 0.0 else "null"


def _plain_with(floats):
    # the exact built-in types by one lookup; a subclass goes through json's own checks
    exact = {str: encode_basestring, int: int.__repr__, float: floats,
             bool: lambda v: "true" if v else "false", type(None): lambda v: "null"}

    def plain(v) -> str:
        """One plain value as json writes it (the order of checks is json's own)."""
        write = exact.get(type(v))
        if write is not None:
            return write(v)
        if isinstance(v, str):
            return encode_basestring(v)
        if isinstance(v, int):
            return int.__repr__(v)
        if isinstance(v, float):
            return floats(v)
        raise _Unusual
    return plain


_AS_JSON, _CLEANED = _plain_with(_float), _plain_with(_finite)


def _is_plain(v) -> bool:
    return isinstance(v, _PLAIN)


def _write(v, out: list[str], step: str, inner: str, plain) -> None:
    """Append ``v``'s text to ``out``; ``inner``: the indent of its items' lines."""
    if isinstance(v, dict):
        _dict(v, out, step, inner, plain)
    elif isinstance(v, (list, tuple)):
        _list(v, out, step, inner, plain)
    else:
        out.append(plain(v))


def _list(items, out: list[str], step: str, inner: str, plain) -> None:
    if not items:
        out.append("[]")
        return
    line = ",\n" + inner
    if all(map(_is_plain, items)):
        out.append("[\n" + inner + line.join(map(plain, items)) + "\n" + inner[:-len(step)] + "]")
        return
    out.append("[\n" + inner)
    deeper = inner + step
    for n, item in enumerate(items):
        if n:
            out.append(line)
        _write(item, out, step, deeper, plain)
    out.append("\n" + inner[:-len(step)] + "]")


def _dict(d: dict, out: list[str], step: str, inner: str, plain) -> None:
    if not d:
        out.append("{}")
        return
    if not all(isinstance(key, str) for key in d):
        raise _Unusual  # json converts such keys first; not worth copying here
    pairs = sorted(d.items())
    line = ",\n" + inner
    if all(_is_plain(v) for _, v in pairs):
        out.append("{\n" + inner + line.join(encode_basestring(k) + ": " + plain(v)
                                             for k, v in pairs)
                   + "\n" + inner[:-len(step)] + "}")
        return
    out.append("{\n" + inner)
    deeper = inner + step
    for n, (key, v) in enumerate(pairs):
        if n:
            out.append(line)
        out.append(encode_basestring(key) + ": ")
        _write(v, out, step, deeper, plain)
    out.append("\n" + inner[:-len(step)] + "}")


def dumps_indented(value, indent: int, *, clean=None) -> str:
    """``json.dumps(value, sort_keys=True, indent=indent, ensure_ascii=False)``; with
    ``clean`` (a function that writes NaN and the infinities as None, keys as strings and
    tuples as lists, like ``render_json``'s), the text of ``json.dumps(clean(value), ...)``
    without building the cleaned copy."""
    step = " " * indent
    out: list[str] = []
    try:
        if not step:  # an indent of 0 still breaks lines: json's own rules, left to json
            raise _Unusual
        _write(value, out, step, step, _CLEANED if clean else _AS_JSON)
    except (_Unusual, RecursionError):
        return json.dumps(clean(value) if clean else value, sort_keys=True, indent=indent,
                          ensure_ascii=False)
    return "".join(out)
