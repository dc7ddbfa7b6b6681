"""A piece of version 2 row lines read with each ranking checked as text, not parsed.

What a comparison keeps of a row's ranking is its chunk ids; its scores are only checked
(JSON numbers, finite). Parsing it builds a list, a str and a float per pair, most of the
work of reading a row. Here each line is cut before its ranking, the last field: the fields
before it are parsed by json (one ``raw_decode`` per line, so each line is one row of 15
fields), and the rankings of the whole piece are checked at once by C-level string
methods, their ids split out at the quotes. The layout checked is the writer's compact one:
``[["id",score],...]`` with no whitespace, no escape or control character anywhere (so each
id is its text), and every score a plain JSON number small enough that no row's sum can
overflow. Whichever ``,[[`` the cut finds, the line is the cut's two halves joined, so when
both check out the row is what json would give; anything else gives None and the piece is
parsed whole as before, which decides.
"""

from __future__ import annotations

import json
import re
from itertools import compress, islice, repeat

from ci_eval.core.artefact.row_blocks import RowBlock, scanned_block

_INDENT = "  "  # the writer's row lines: two spaces, the row, a comma but after the last
_RANKING = ",[["
_EMPTY = ",[]]"  # a line whose ranking is empty
_NOT_IN_A_RANKING = bytes(range(0x20)) + b"\\"  # a control character or an escape
# A JSON number with at most 20 digits before its point and an exponent of at most two
# digits: below 1e120, so 10,000 of them sum to a finite float.
_NUMBER = r"-?(?:0|[1-9][0-9]{0,19})(?:\.[0-9]+)?(?:[eE][-+]?[0-9]{1,2})?"
_NUMBERS = re.compile(f"{_NUMBER}(?:,{_NUMBER})*".encode())
_DIGITS = b"0123456789"
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_LONG_WHOLE = b"," + b"0" * 21  # a whole part of more than 20 digits
_BOUNDARY = b"],[\x00,"  # between two scores once the ids are out (no row holds a NUL)


def _refuse(name: str):
    raise ValueError(f"{name} is not allowed")


_DECODER = json.JSONDecoder(parse_constant=_refuse)


def block_of_lines(text: str, metrics: int) -> RowBlock | None:
    """The checked block of ``text`` (row lines as the writer writes them, joined by
    ``,\\n``, no comma after the last), or None when it cannot vouch for every row here."""
    lines = text.split(",\n" + _INDENT)
    if not lines[0].startswith(_INDENT):
        return None
    lines[0] = lines[0][len(_INDENT):]
    cut = _cut(lines)
    if cut is None:
        return None
    rows, rankings = _heads(cut[0]), _ranking_ids(cut[1], max(map(len, lines)))
    if rows is None or rankings is None:
        return None
    return scanned_block(rows, *rankings, metrics)


def _cut(lines: list[str]):
    """Each line as the text before its ranking and the ranking's text, or None."""
    if not all(map(str.endswith, lines, repeat("]]"))):
        return None
    if all(map(str.endswith, lines, repeat("]]]"))):  # no ranking empty
        cuts = list(map(str.rfind, lines, repeat(_RANKING)))
    else:
        cuts = [len(line) - len(_EMPTY) if line.endswith(_EMPTY) else line.rfind(_RANKING) for line in lines]
    if min(cuts) < 0:
        return None
    return [line[:at] for line, at in zip(lines, cuts)], [line[at + 1:-1] for line, at in zip(lines, cuts)]


def _heads(heads: list[str]) -> list | None:
    """Each line's fields before its ranking, or None when one is not exactly one JSON list
    (``raw_decode`` from the line's start must end at its last character)."""
    texts = list(map(str.__add__, heads, repeat("]")))
    try:
        parsed = list(map(_DECODER.raw_decode, texts))
    except (ValueError, RecursionError):
        return None
    rows, ends = zip(*parsed)
    return list(rows) if list(ends) == list(map(len, texts)) else None


def _ranking_ids(rankings: list[str], longest: int) -> list | None:
    """Each ranking's chunk ids as a dict's keys, and all of them in one run, when every ranking is ``[["id",number],...]``
    or ``[]`` (no whitespace, no escape), each id at most 1,000 characters and named once in
    its ranking, each number one ``_NUMBER``; else None. ``longest``: the longest line's
    length (no id is longer)."""
    quotes = list(map(str.count, rankings, repeat('"')))
    # two quotes a pair, and no quote only in an empty ranking ("[]" holds none)
    if any(map(int.__and__, quotes, repeat(1))) or quotes.count(0) != rankings.count("[]"):
        return None
    lengths = list(map(int.__rshift__, quotes, repeat(1)))
    inner = map(str.__getitem__, rankings, repeat(slice(1, -1)))
    joined = ",".join(compress(inner, quotes) if 0 in quotes else inner)
    ids = []
    if joined:
        raw = joined.encode("utf-8")  # a character below 0x80 is its byte there
        if len(raw.translate(None, _NOT_IN_A_RANKING)) != len(raw) or max(lengths) > 10_000:
            return None
        parts = joined.split('"')
        if parts[0] != "[" or not _scores_valid(parts[2::2]):
            return None
        ids = parts[1::2]
        if longest > 1000 and max(map(len, ids)) > 1000:
            return None
    each = iter(ids)
    kept = list(map(dict.fromkeys, map(islice, repeat(each), lengths)))
    return (kept, ids) if sum(map(len, kept)) == len(ids) else None  # shorter when an id repeats


def _scores_valid(between: list[str]) -> bool:
    """Whether the texts between one id and the next are each ``,number],[`` and the last
    ``,number]``: every NUL among them (none is in the text) marks a boundary, so when
    ``_BOUNDARY`` occurs once for each NUL every boundary has that shape."""
    try:
        marked = ("\x00".join(between) + ",[").encode("ascii")
    except UnicodeEncodeError:
        return False
    if not marked.startswith(b",") or not marked.endswith(b"],[") or marked.count(_BOUNDARY) != len(between) - 1:
        return False
    numbers = marked[1:-3].replace(_BOUNDARY, b",")
    return _plain_decimals(numbers, len(between)) or (
        _NUMBERS.fullmatch(numbers) is not None and numbers.count(b",") == len(between) - 1)


def _plain_decimals(numbers: bytes, count: int) -> bool:
    """Whether ``numbers`` is ``count`` decimals such as ``0.25`` joined by commas, each with
    digits on both sides of its point, no leading zero and at most 20 digits before the
    point (the common case, checked without a regular expression)."""
    if numbers.translate(None, _DIGITS) != b".," * (count - 1) + b".":  # digits, a point a number
        return False
    if numbers.startswith(b".") or numbers.endswith(b".") or b",." in numbers or b".," in numbers:
        return False
    if numbers.count(b",0") + numbers.startswith(b"0") != numbers.count(b",0.") + numbers.startswith(b"0."):
        return False  # a leading zero
    zeros = numbers.translate(_ZEROS)
    return _LONG_WHOLE not in zeros and not zeros.startswith(_LONG_WHOLE[1:])
