"""A JSON document read a block at a time, one element of one of its lists at a time.

A 1,000,000-question gold set read whole holds its bytes, its text and a million parsed
objects at once (about 860 MB); read here, what is alive is a few blocks of text and the
element being handed on. This reader only says yes to a document ``inputs/files.parse_json``
accepts and gives the same values: anything it is not sure of (a repeated key, NaN, a
number too large, a lone surrogate escape, broken JSON, text that is not UTF-8) makes it
give up, and the caller reads the file whole, whose errors name the file and the place.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from json.decoder import WHITESPACE
from typing import Any

from ci_eval.inputs.files import SURROGATE_ESCAPE_RE, finite_float, reject_constant, repeat_noting_hook


class GiveUp(Exception):
    """The document needs the whole-file reader (to be refused with its place, usually)."""


class _Text:
    """The decoded text of ``blocks`` from ``pos`` on, read further on demand, and the
    sha256 of every byte read."""

    def __init__(self, blocks: Iterator[bytes]):
        self._blocks = blocks
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self.sha256 = hashlib.sha256()
        self.buf, self.pos, self.done, self._started = "", 0, False, False

    def grow(self) -> None:
        """At least double what is left to read in the buffer (at least one block), so
        re-reading a value a block boundary cut costs linear time overall."""
        if self.done:
            raise GiveUp
        wanted = max(len(self.buf) - self.pos, 1)
        pieces = [self.buf[self.pos:]]
        got = 0
        while got < wanted and not self.done:
            block = next(self._blocks, None)
            try:
                if block is None:
                    self.done = True
                    text = self._decoder.decode(b"", final=True)
                else:
                    self.sha256.update(block)
                    text = self._decoder.decode(block)
            except UnicodeDecodeError:
                raise GiveUp from None
            if not self._started and text:
                self._started = True
                text = text[1:] if text.startswith("\ufeff") else text  # as files.decode does
            # a surrogate escape anywhere, perhaps cut by a block boundary: the whole-file
            # reader decides whether it is a pair or a lone one
            if SURROGATE_ESCAPE_RE.search(pieces[-1][-5:] + text):
                raise GiveUp
            pieces.append(text)
            got += len(text)
        self.buf, self.pos = "".join(pieces), 0

    def skip_space(self) -> None:
        while True:
            self.pos = WHITESPACE.match(self.buf, self.pos).end()
            if self.pos < len(self.buf) or self.done:
                return
            self.grow()

    def char(self) -> str:
        """The next character that is not white space, consumed ('' at the end)."""
        self.skip_space()
        if self.pos == len(self.buf):
            return ""
        self.pos += 1
        return self.buf[self.pos - 1]

    def rest_is_space(self) -> bool:
        self.skip_space()
        return self.pos == len(self.buf)


_AFTER_VALUE = frozenset(" \t\n\r,:]}")


class _Values:
    """JSON values read from a _Text with parse_json's rules, one at a time."""

    def __init__(self, text: _Text):
        self.text = text
        self._repeated: list = []
        self._decoder = json.JSONDecoder(parse_constant=reject_constant, parse_float=finite_float,
                                         object_pairs_hook=repeat_noting_hook(self._repeated))

    def next(self) -> Any:
        text = self.text
        while True:
            text.skip_space()
            try:
                value, end = self._decoder.raw_decode(text.buf, text.pos)
            except json.JSONDecodeError:
                text.grow()  # perhaps cut by the end of the buffer; GiveUp at the end of the file
                continue
            except (ValueError, RecursionError):  # NaN, a number too large, too deep
                raise GiveUp from None
            # a value not followed by what may follow a value may be a number cut short
            # by the buffer's end ("12" of "125", "0" of "0.5")
            if text.done or (end < len(text.buf) and text.buf[end] in _AFTER_VALUE):
                break
            text.grow()
        if self._repeated:
            raise GiveUp
        text.pos = end
        return value

    def elements(self, take: Callable[[Any], bool]) -> None:
        """Each element of the list whose ``[`` was just read, to ``take``, up to its ``]``:
        the C scanner and one match for the separator an element."""
        while not self._element(take):
            pass

    def _element(self, take: Callable[[Any], bool]) -> bool:
        """One element to ``take``; True when it was the list's last."""
        text, scan, repeated = self.text, self._decoder.scan_once, self._repeated
        while True:
            buf, pos = text.buf, text.pos
            try:
                value, end = scan(buf, pos)
            except (StopIteration, json.JSONDecodeError):
                text.skip_space()  # white space a block boundary cut from the separator
                if text.pos == pos:
                    text.grow()  # perhaps cut by the end of the buffer; GiveUp at the end of the file
                continue
            except (ValueError, RecursionError):
                raise GiveUp from None
            after = _SEPARATOR.match(buf, end)
            if after is None:  # the buffer ends here (a number perhaps cut short), or broken
                text.grow()
                continue
            if repeated or not take(value):
                raise GiveUp
            text.pos = after.end()
            return after.group(1) == "]"


# What follows a list's element: white space, a comma or the closing bracket, white space.
_SEPARATOR = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")


def _list(values: _Values, take: Callable[[Any], bool]) -> None:
    text = values.text
    if text.char() != "[":
        raise GiveUp
    text.skip_space()
    if text.buf.startswith("]", text.pos):
        text.pos += 1
        return
    values.elements(take)


def stream_object(blocks: Iterator[bytes], list_key: str, take: Callable[[Any], bool]) -> tuple[dict, str]:
    """Read the JSON object in ``blocks``: each element of its ``list_key`` list is handed
    to ``take`` in order (False: give up) and not kept; the other top-level keys are
    returned with the sha256 of the bytes. Raises GiveUp when the document is not surely
    valid or ``list_key`` is missing."""
    text = _Text(blocks)
    values = _Values(text)
    head: dict = {}
    seen_list = False
    if text.char() != "{":
        raise GiveUp
    while True:
        key = values.next()
        if type(key) is not str or key in head or (key == list_key and seen_list) or text.char() != ":":
            raise GiveUp
        if key == list_key:
            _list(values, take)
            seen_list = True
        else:
            head[key] = values.next()
        separator = text.char()
        if separator == "}":
            break
        if separator != ",":
            raise GiveUp
    if not seen_list or not text.rest_is_space():
        raise GiveUp
    return head, text.sha256.hexdigest()
