"""Rewriting a JSON document's text so that only the lines carrying a change change.

A gold set kept by hand may be laid out any way (indented by two, by four, on one line); a
tool that adds one anchor must not reflow the rest of the file, or its PR diff hides what it
did. ``patch_text`` walks the old text and the old and new values together: equal values
keep their text byte for byte, a changed scalar is replaced where it stands, a removed
member is cut with its separator, an added one is written after the last, in the style
of its neighbours (their indentation, separators and escaping).

The layout is read from the text, never guessed from the values; anything the walk cannot
follow (a key given twice, a BOM, an empty container gaining members with nothing to
imitate) raises ``LayoutLost``, and the caller writes the document in its own layout.

The walk reads a container's members only when it descends into it, and an unchanged
member shared by the old and new values (the same object) is passed over unread: a grade
on the labelling page rewrites a 1,000-question file laid out by hand in a few
milliseconds rather than the 40 to 70 of reading every member (benchmarks/bench_label.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class LayoutLost(Exception):
    """The old text cannot be followed: write the document afresh."""


class _Node:
    """A value's place in the text; a container's members are read on first use."""

    __slots__ = ("start", "end", "_text", "_members")

    def __init__(self, text: str, start: int):
        _, self.end = _DECODER.raw_decode(text, start)  # the value's extent, parsed in C
        self.start, self._text, self._members = start, text, None

    @property
    def members(self) -> list:
        """objects: (key, key start, value node); arrays: (None, start, value node)."""
        if self._members is None:
            self._members = _members(self._text, self.start)
        return self._members


def _skip(text: str, i: int) -> int:
    return _SPACE.match(text, i).end()


def _scan(text: str, i: int) -> _Node:
    """The value starting at ``i`` (no leading space)."""
    return _Node(text, i)


def _members(text: str, i: int) -> list:
    """The members of the container starting at ``i`` ([] for a scalar)."""
    if text[i] not in "{[":
        return []
    close = "}" if text[i] == "{" else "]"
    members, j = [], _skip(text, i + 1)
    while text[j] != close:
        key, key_at = None, j
        if close == "}":
            key, j = _DECODER.raw_decode(text, j)
            j = _skip(text, _skip(text, j) + 1)  # past the colon
        value = _scan(text, j)
        members.append((key, key_at, value))
        j = _skip(text, value.end)
        if text[j] == ",":
            j = _skip(text, j + 1)
    return members


@dataclass(frozen=True)
class _Style:
    indent: str  # one level of indentation ("" for a file on one line)
    colon: str  # between a key and its value
    comma: str  # between members, on one line
    ensure_ascii: bool
    newline: str = "\n"  # or the file's "\r\n"

    def render(self, value: Any, at: str) -> str:
        """``value`` in this style, its later lines indented from ``at`` (the column of the
        member it stands in)."""
        if not self.indent:
            return json.dumps(value, ensure_ascii=self.ensure_ascii, allow_nan=False,
                              separators=(self.comma, self.colon))
        text = json.dumps(value, ensure_ascii=self.ensure_ascii, allow_nan=False, indent=self.indent,
                          separators=(",", self.colon))
        return text.replace("\n", self.newline + at)


def _style(text: str) -> _Style:
    indents = [m.group(1) for m in re.finditer(r"\n([ \t]+)[^\s]", text)]
    indent = min(indents, key=len) if indents else ""
    colon = re.search(r'"\s*(:\s*)', text)
    ascii_only = text.isascii() and "\\u" in text
    comma = ", " if re.search(r",[ ]", text) or not re.search(r",\S", text) else ","
    return _Style(indent, colon.group(1) if colon else ": ", comma, ascii_only, "\r\n" if "\r\n" in text else "\n")


def _line_indent(text: str, i: int) -> str:
    line_start = text.rfind("\n", 0, i) + 1
    return _SPACE.match(text, line_start).group(0).lstrip("\n\r")


def _same(a: Any, b: Any) -> bool:
    if a is b:  # a member the change did not touch: the new value shares the old object
        return True
    # 1 == 1.0 == True in Python; in the file they are three different texts.
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):  # members' order means nothing in JSON: the file's is kept
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _edits(text: str, node: _Node, old: Any, new: Any, style: _Style, out: list) -> None:
    if _same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        _object_edits(text, node, old, new, style, out)
    elif isinstance(old, list) and isinstance(new, list):
        _array_edits(text, node, old, new, style, out)
    else:
        out.append((node.start, node.end, style.render(new, _line_indent(text, node.start))))


def _object_edits(text: str, node: _Node, old: dict, new: dict, style: _Style, out: list) -> None:
    keys = [k for k, _, _ in node.members]
    if len(set(keys)) != len(keys):
        raise LayoutLost("a key is given twice")
    heads = [f"{json.dumps(k, ensure_ascii=style.ensure_ascii)}{style.colon}" for k in new if k not in old]
    if heads and node.members and not any(k in new for k in keys):  # every member replaced
        out.append(_replace_members(text, node, heads, [v for k, v in new.items() if k not in old], style))
        return
    kept = []
    for n, (key, _, value) in enumerate(node.members):
        if key in new:
            _edits(text, value, old[key], new[key], style, out)
            kept.append(n)
    out += _cuts(node, [n for n, (key, _, _) in enumerate(node.members) if key not in new])
    added = [(k, v) for k, v in new.items() if k not in old]
    if added:
        out.append(_append(text, node, kept, [f"{json.dumps(k, ensure_ascii=style.ensure_ascii)}{style.colon}"
                                             for k, _ in added], [v for _, v in added], style))


def _array_edits(text: str, node: _Node, old: list, new: list, style: _Style, out: list) -> None:
    if old and new and not _same(old[0], new[0]) and len(old) == 1 == len(new):
        _edits(text, node.members[0][2], old[0], new[0], style, out)
        return
    common = min(len(old), len(new))
    for n in range(common):
        _edits(text, node.members[n][2], old[n], new[n], style, out)
    out += _cuts(node, list(range(common, len(old))))
    if len(new) > common:
        out.append(_append(text, node, list(range(common)), [""] * (len(new) - common), new[common:], style))


def _member_start(node: _Node, n: int) -> int:
    return node.members[n][1]


def _cuts(node: _Node, removed: list[int]) -> list[tuple[int, int, str]]:
    """The members at ``removed`` cut, each with one separator. Members removed from the
    front go as one cut up to the first kept member: cut one by one, the first's cut
    (up to the next member) would overlap the second's (from the end of the first)."""
    removed, front = sorted(removed), 0
    while front < len(removed) and removed[front] == front:
        front += 1
    if not front:
        return [_cut(node, n) for n in removed]
    end = _member_start(node, front) if front < len(node.members) else node.end - 1
    start = _member_start(node, 0) if front < len(node.members) else node.start + 1
    return [(start, end, "")] + [_cut(node, n) for n in removed[front:]]


def _cut(node: _Node, n: int) -> tuple[int, int, str]:
    """Member n removed with one separator: the one before it, or for the first member the
    one after it (the text up to the next member)."""
    value = node.members[n][2]
    if n > 0:
        return node.members[n - 1][2].end, value.end, ""
    if len(node.members) > 1:
        return _member_start(node, 0), _member_start(node, 1), ""
    return node.start + 1, node.end - 1, ""


def _replace_members(text: str, node: _Node, heads: list[str], values: list, style: _Style) -> tuple:
    """Every member of a container replaced by new ones, written where the old ones stood
    and separated as they were."""
    first, last = _member_start(node, 0), node.members[-1][2].end
    at = _line_indent(text, first)
    if len(node.members) > 1:
        sep = text[node.members[0][2].end:_member_start(node, 1)]
    else:
        lead = text[node.start + 1:first]
        sep = "," + lead if "\n" in lead else style.comma
    return first, last, sep.join(f"{head}{style.render(v, at)}" for head, v in zip(heads, values))


def _append(text: str, node: _Node, kept: list[int], heads: list[str], values: list, style: _Style) -> tuple:
    """New members after the last kept one, each on its own line where the members are."""
    if not kept:
        raise LayoutLost("nothing to imitate in an emptied container")
    last = node.members[kept[-1]][2]
    at = _line_indent(text, _member_start(node, kept[-1]))
    k = kept[-1]
    if k > 0:  # the separator the file put before the last kept member (removed ones aside)
        sep = text[node.members[k - 1][2].end:_member_start(node, k)]
    else:
        sep = text[node.start + 1:_member_start(node, kept[-1])]
        sep = "," + sep if "\n" in sep else style.comma
    if not sep.startswith(","):
        sep = "," + sep.lstrip(",")
    body = "".join(f"{sep}{head}{style.render(v, at)}" for head, v in zip(heads, values))
    return last.end, last.end, body


def patch_text(old_text: str, old: Any, new: Any) -> str:
    """``old_text`` (whose value is ``old``) rewritten to hold ``new``, changing only the text
    of what changed. Raises LayoutLost when the text cannot be followed."""
    if old_text.startswith("\ufeff"):
        raise LayoutLost("a byte order mark")
    edits: list[tuple[int, int, str]] = []
    try:
        root = _scan(old_text, _skip(old_text, 0))
        _edits(old_text, root, old, new, _style(old_text), edits)
    except (ValueError, IndexError) as exc:  # a member's text the walk cannot follow
        raise LayoutLost(str(exc)) from None
    out, at = [], 0
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < at:
            raise LayoutLost("overlapping edits")
        out += [old_text[at:start], replacement]
        at = end
    out.append(old_text[at:])
    result = "".join(out)
    if _canonical(json.loads(result)) != _canonical(new):  # the walk went wrong: never write what was not asked
        raise LayoutLost("the patched text does not read back as the document")
    return result


def _canonical(value: Any) -> str:
    """One text per JSON value whatever the order of its keys: ``1``, ``1.0`` and ``true``
    stay three texts, as ``_same`` holds them apart (the encoder runs in C, where walking
    the whole document with ``_same`` took a third of a key's time)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
