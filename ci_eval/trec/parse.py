"""TREC qrels and run files, parsed column-wise with numpy.

Formats (whitespace separated, one record a line):

* qrels: ``qid iter docid grade`` (``iter`` is ignored, the grade a whole number);
* run: ``qid Q0 docid rank score tag`` (``Q0``, ``rank`` and ``tag`` are ignored, as
  trec_eval ignores them; anything after the sixth column is ignored too).

As in trec_eval, lines whose first non-blank character is ``#`` are comments and blank
lines are skipped (trec_eval rejects blank lines in qrels; we do not).
Errors name the file and the line: a line with too few columns (or a qrels line with too
many), a grade that is not a whole number, a score that is not a finite number, a
document listed twice for one query (run) or judged twice for one query (qrels).

Parsing never builds a Python object per line:

* the text is split in blocks of about a megabyte, cut on line ends. In a block where
  every line holds exactly the expected columns, one whitespace byte apart (the usual
  file), the separators alone give each field's offsets; any other block (comments,
  blank lines, runs of blanks, CR LF, extra columns) goes through a general splitter
  that counts the tokens of each line. Both give the same offsets.
* A field becomes a fixed-width row of bytes, gathered for all rows at once from a
  strided view of the text that has a row starting at every byte, and zero padded past
  the field's end. Ids are kept as rows of 64-bit words: equal words mean equal ids,
  and the same bytes read as a fixed-width string compare as trec_eval's ``strcmp``.
* Scores go through numpy's conversion, a block at a time (correctly rounded, as strtod).
  A conversion of plain decimals 8 bytes at a time bought 1.14x on ``evaluate`` at
  20,000 queries x 100 results and was removed (docs/benchmarks.md, "Speed mechanisms,
  measured").
* Repeated (query, document) pairs and the join with the qrels go through a 64-bit
  hash of the pair; the hash only proposes, every match is confirmed on the words.
* Each block is done with (split, gathered, converted, hashed) while it is in cache;
  only per-row results are kept (id words, score, hash), never the offsets, and files
  are memory-mapped rather than copied.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ci_eval.core.limits import MAX_ID_BYTES
from ci_eval.core.measure.ranking import distinct_sorted
from ci_eval.errors import InputError

_BLOCK = 1 << 20  # bytes of text per splitting step: the temporaries stay in cache
_ROWS = 1 << 14  # rows per step of the column-wise work, for the same reason
_RUN_BYTES_LIMIT = 1 << 36


def _read(path: str, what: str) -> bytes:
    from ci_eval.inputs.files import read_bytes

    return read_bytes(path, what, max_bytes=_RUN_BYTES_LIMIT)


# --------------------------------------------------------------------------- splitting


def _blocks(text, fields: tuple[int, ...], least: int, most: int | None, source: str):
    """The record lines of ``text`` (bytes or a memory map), a block at a time, as
    ``(chunk, first, last, line_base, lines)``: the block's bytes, start and end offsets
    in it of the wanted fields ((fields x rows) int64), the number of lines before the
    block, and each row's line within the block (None when every line of the block is a
    row, in order)."""
    size = len(text)
    buf = np.frombuffer(text, dtype=np.uint8) if size else np.zeros(0, dtype=np.uint8)
    wanted = np.asarray(fields)
    pos = 0
    line_base = 0
    while pos < size:
        end = size if size - pos <= _BLOCK else text.rfind(b"\n", pos, pos + _BLOCK) + 1
        if end <= pos:  # one line longer than a block
            found = text.find(b"\n", pos + _BLOCK)
            end = size if found < 0 else found + 1
        chunk = buf[pos:end]
        got = _split_plain(chunk, least, wanted)
        if got is None:
            got = _split_general(chunk, least, most, wanted, source, line_base)
        first, last, lines, n_lines = got
        _refuse_long_fields(first, last, lines, line_base, source)
        yield chunk, first, last, line_base, lines
        line_base += n_lines
        pos = end


# The longest id or number a record may hold (core/limits.py says why, and holds the gold
# set's and the artefact's schemas to the same bound).
_LONGEST_FIELD = MAX_ID_BYTES


def _refuse_long_fields(first: np.ndarray, last: np.ndarray, lines, line_base: int, source: str) -> None:
    widths = last - first
    if widths.size and int(widths.max()) > _LONGEST_FIELD:
        row = int(np.argmax(widths.max(axis=0)))
        line = line_base + 1 + (row if lines is None else int(lines[row]))
        raise InputError(f"a field of {int(widths.max()):,} bytes: ids and numbers are at most "
                         f"{_LONGEST_FIELD:,} bytes", source, f"line {line}")


class _LineMap:
    """The line number of a row, from what ``_blocks`` reported."""

    def __init__(self) -> None:
        self.first_rows: list[int] = []
        self.blocks: list[tuple[int, np.ndarray | None]] = []

    def add(self, row: int, line_base: int, lines: np.ndarray | None) -> None:
        self.first_rows.append(row)
        self.blocks.append((line_base, lines))

    def line_of(self, row: int) -> int:
        at = bisect.bisect_right(self.first_rows, row) - 1
        line_base, lines = self.blocks[at]
        offset = row - self.first_rows[at]
        return line_base + 1 + (offset if lines is None else int(lines[offset]))


# Measured (benchmarks/bench_mechanisms.py): with every block through the general splitter,
# evaluate on 20,000 queries x 100 results took 1.43x the wall.
def _split_plain(chunk: np.ndarray, k: int, wanted: np.ndarray):
    """Field offsets in a block whose every line holds exactly ``k`` tokens, one
    whitespace byte apart, ending in a newline; None for any other block."""
    if chunk[-1] != 10:  # the last block of a file without a final newline
        return None
    at = np.flatnonzero(chunk <= 32)  # blank, tab, CR, LF and other control bytes separate
    if len(at) % k or at[0] == 0:
        return None
    # Two separators side by side: a blank line, leading or repeated blanks, CR LF.
    if np.any(at[1:] - at[:-1] == 1):
        return None
    seps = at.reshape(-1, k)
    # Each group of k separators ends on a newline and there are no other newlines: the
    # groups are exactly the lines. (Counting the block's newlines reads it once more, in
    # order, which is cheaper than gathering the byte at every separator.)
    if not np.all(chunk[seps[:, -1]] == 10) or np.count_nonzero(chunk == 10) != len(seps):
        return None
    line_start = np.empty(len(seps), dtype=np.int64)
    line_start[0] = 0
    line_start[1:] = seps[:-1, -1] + 1
    if np.any(chunk[line_start] == 35):  # comment lines
        return None
    first = np.empty((len(wanted), len(seps)), dtype=np.int64)
    for i, f in enumerate(wanted.tolist()):
        if f == 0:
            first[i] = line_start
        else:
            np.add(seps[:, f - 1], 1, out=first[i])
    return first, seps.T[wanted], None, len(seps)


def _split_general(chunk: np.ndarray, least: int, most: int | None,
                   wanted: np.ndarray, source: str, line_base: int):
    """Field offsets in any block: tokens counted line by line; comments and blank
    lines skipped; a line with a wrong number of tokens is an error naming its line."""
    # Between a newline before the block (a virtual one at the start of the text) and one
    # after it (added after an unterminated last line), so tokens pair up.
    chunk = np.concatenate(([10], chunk, [] if chunk[-1] == 10 else [10])).astype(np.uint8)
    space = chunk <= 32
    edges = np.flatnonzero(space[:-1] != space[1:])
    edges += 1
    tok_start, tok_end = edges[0::2], edges[1::2]
    newlines = np.flatnonzero(chunk == 10)
    n_lines = len(newlines) - 1
    line = np.searchsorted(newlines, tok_start) - 1
    count = np.bincount(line, minlength=n_lines)
    first_tok = np.cumsum(count) - count
    has = count > 0
    comment = np.zeros(n_lines, dtype=bool)
    comment[has] = chunk[tok_start[first_tok[has]]] == 35
    record = has & ~comment
    bad = record & ((count < least) | ((count > most) if most is not None else False))
    if np.any(bad):
        at = int(np.argmax(bad))
        n = int(count[at])
        expected = f"{least}" if most == least else f"at least {least}"
        raise InputError(
            f"malformed line: {n} column{'s' if n != 1 else ''}, expected {expected}",
            source=source,
            place=f"line {line_base + at + 1}",
        )
    lines = np.flatnonzero(record)
    idx = first_tok[lines][None, :] + wanted[:, None]
    return tok_start[idx] - 1, tok_end[idx] - 1, lines, n_lines


# --------------------------------------------------------------------------- fields


def _window(buf: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """(rows x width) uint8: the bytes ``buf[a:a + width]`` for each ``a`` in ``at``,
    zero where that range leaves the buffer."""
    size = len(buf)
    out = None
    if size >= width:
        # One row starting at every byte: gathering rows copies `width` bytes per index.
        view = np.ndarray((size - width + 1,), dtype=np.dtype((np.void, width)), buffer=buf,
                          strides=(1,))
        inside = (at >= 0) & (at <= size - width)
        if inside.all():
            return view[at].view(np.uint8).reshape(len(at), width)
        out = np.zeros((len(at), width), dtype=np.uint8)
        ok = np.flatnonzero(inside)
        out[ok] = view[at[ok]].view(np.uint8).reshape(len(ok), width)
        edge = np.flatnonzero(~inside)
    else:
        out = np.zeros((len(at), width), dtype=np.uint8)
        edge = np.arange(len(at))
    if len(edge):  # the first or last few rows: byte by byte
        idx = at[edge, None] + np.arange(width)
        valid = (idx >= 0) & (idx < size)
        out[edge] = np.where(valid, buf[np.clip(idx, 0, max(size - 1, 0))] if size else 0, 0)
    return out


_KEEP_TABLE_WORDS = 4  # tokens up to 32 bytes are masked through one table row


@functools.cache
def _keep(nw: int) -> np.ndarray:
    """(8 nw + 1) x nw words: row v keeps the first v bytes (in memory order) of nw words
    and zeroes the rest, so one gather by token length masks a whole row."""
    return np.frombuffer(b"".join(b"\xff" * v + b"\0" * (8 * nw - v) for v in range(8 * nw + 1)),
                         dtype=np.uint64).reshape(8 * nw + 1, nw)


def _field(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, nw: int = 0) -> np.ndarray:
    """Tokens as (rows x n) uint64 words holding their bytes in text order, zero padded;
    n is the least that holds the longest token, or ``nw`` if more.

    The words compare equal exactly when the tokens do (a token never holds a NUL byte);
    ``_as_bytes`` reads them back as a fixed-width bytes array.
    """
    n = len(starts)
    lengths = ends - starts
    longest = int(lengths.max()) if n else 0
    nw = max(1, nw, -(-longest // 8))
    out = np.empty((n, nw), dtype=np.uint64)
    offsets = np.arange(0, 8 * nw, 8)
    for lo in range(0, n, _ROWS):
        hi = min(n, lo + _ROWS)
        block = _window(buf, starts[lo:hi], 8 * nw).view(np.uint64)
        if nw <= _KEEP_TABLE_WORDS:
            keep = np.take(_keep(nw), lengths[lo:hi], axis=0)
        else:  # a table for such long tokens would be big: word by word
            keep = _keep(1)[np.minimum(np.maximum(lengths[lo:hi, None] - offsets, 0), 8), 0]
        np.bitwise_and(block, keep, out=out[lo:hi])
    return out


def _as_bytes(words: np.ndarray) -> np.ndarray:
    """Words back to a fixed-width bytes array (numpy drops the zero padding)."""
    return np.ascontiguousarray(words).view(f"S{8 * words.shape[1]}").ravel()


def _parse_scores(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Scores as float64 by numpy's conversion (correctly rounded, as strtod), all at once,
    or token by token when one of them is not a number: NaN there (and inf where a token
    is one)."""
    raw = _as_bytes(_field(buf, starts, ends))
    try:
        return raw.astype(np.float64)
    except ValueError:
        scores = np.empty(len(raw))
        for i, token in enumerate(raw.tolist()):
            try:
                scores[i] = np.array([token]).astype(np.float64)[0]
            except ValueError:
                scores[i] = np.nan
        return scores


# --------------------------------------------------------------------------- hashing

_ODD = np.array([0xD6E8FEB86659FD93, 0xA0761D6478BD642F, 0xE7037ED1A0B428DB,
                 0x8EBC6AF09C88C6E3, 0x589965CC75374CC3, 0x1D8E4E27C47D124F,
                 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)


def _mix(z: np.ndarray) -> np.ndarray:
    # splitmix64's finaliser: every input bit reaches every output bit.
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _digest(words: np.ndarray) -> np.ndarray:
    """A 64-bit digest of each row of words. A zero word adds nothing, so the same token
    gathered at different widths gets the same digest."""
    out = np.zeros(len(words), dtype=np.uint64)
    for lo in range(0, len(words), _ROWS):
        block = words[lo:lo + _ROWS]
        acc = out[lo:lo + _ROWS]
        for k in range(words.shape[1]):
            acc += block[:, k] * _ODD[k % len(_ODD)]
    return out


def _qid_keys(qid_words: np.ndarray) -> np.ndarray:
    """A 64-bit key per qid (rows of words), independent of the width they were read at."""
    return _mix(_mix(_digest(qid_words)) + np.uint64(0x9E3779B97F4A7C15))


def _row_codes(heads: np.ndarray, head_codes: np.ndarray, n: int) -> np.ndarray:
    return np.repeat(head_codes, np.diff(np.append(heads, n)))


_DUP_ROWS = 1 << 13  # rows per step of the repeated-pair filter (whole queries)


def _shared_slots(h: np.ndarray, heads: np.ndarray) -> np.ndarray | None:
    """Rows that might repeat an earlier (query, id) pair, ascending, for rows whose
    queries are contiguous (``heads``: where the query changes); None when one query
    is too big for the filter (the caller then looks at every row).

    A repeated pair has a repeated hash, within one query. The rows go through in steps
    of whole queries: each row writes its number into a slot picked by its hash's top
    bits, in a table 16 to 32 times the size of the step (so it stays in cache), and
    reads it back. Rows whose slot someone else took, and that someone, are the
    candidates: about one in twenty, plus every repeat.
    """
    n = len(h)
    if n < 2:
        return np.zeros(0, dtype=np.int64)
    # Steps start on a query's first row, about _DUP_ROWS apart; a bigger query is one step.
    marks = np.arange(0, n, _DUP_ROWS)
    cuts = distinct_sorted(heads[np.searchsorted(heads, marks, side="right") - 1])
    bounds = np.append(cuts, n).tolist()
    longest = max(b - a for a, b in zip(bounds[:-1], bounds[1:]))
    if longest > 64 * _DUP_ROWS:
        return None
    size = 1 << (16 * longest).bit_length()
    owner = np.empty(size, dtype=np.int32)
    taken = np.zeros(size, dtype=bool)
    numbers = np.arange(longest, dtype=np.int32)
    found = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        m = hi - lo
        bits = (16 * m).bit_length()
        slot = (h[lo:hi] >> np.uint64(64 - bits)).view(np.int64)
        owner[slot] = numbers[:m]  # of rows sharing a slot, one number stays
        lost = owner[slot] != numbers[:m]
        if lost.any():
            shared = slot[lost]
            taken[shared] = True
            found.append(np.flatnonzero(taken[slot]) + lo)
            taken[shared] = False
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _first_duplicate(words: np.ndarray, h: np.ndarray, heads: np.ndarray,
                     head_codes: np.ndarray) -> tuple[int, int] | None:
    """Rows (earlier, later) of the first repeated (query, id) pair, or None.
    ``head_codes`` number the distinct qids 0..k-1, each one used (``np.unique``'s inverse).

    When each query's rows are contiguous a filter (``_shared_slots``) picks the rows
    worth a look. Among those, a repeated hash nominates rows; they are then ordered by
    their exact keys (stable, so equal keys stay in file order) and neighbours compared
    word by word.
    """
    n = len(h)
    if n < 2:
        return None
    rows = None
    if int(head_codes.max()) + 1 == len(heads):  # codes 0..k-1, each qid a code: distinct
        rows = _shared_slots(h, heads)
        if rows is not None and len(rows) < 2:
            return None
    sub = h if rows is None else h[rows]
    sorted_h = np.sort(sub)
    twice = sorted_h[1:] == sorted_h[:-1]
    if not np.any(twice):
        return None
    picked = np.flatnonzero(np.isin(sub, sorted_h[1:][twice]))
    rows = picked if rows is None else rows[picked]
    code = head_codes[np.searchsorted(heads, rows, side="right") - 1]
    keys = [words[rows, k] for k in reversed(range(words.shape[1]))] + [code]
    by = np.lexsort(keys)
    rows, code = rows[by], code[by]
    same = (code[1:] == code[:-1]) & np.all(words[rows[1:]] == words[rows[:-1]], axis=1)
    if not np.any(same):
        return None
    earlier, later = rows[:-1][same], rows[1:][same]
    at = int(np.argmin(later))
    return int(earlier[at]), int(later[at])


def _pad(words: np.ndarray, n: int) -> np.ndarray:
    if words.shape[1] >= n:
        return words
    return np.concatenate([words, np.zeros((len(words), n - words.shape[1]), np.uint64)], 1)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


# --------------------------------------------------------------------------- parsed files


@dataclass(frozen=True)
class _Records:
    """Rows of a parsed file: id words and (qid, id) hashes per row; the qids as runs of
    rows (``heads`` where the qid changes, ``head_codes`` its code into ``qids``)."""

    qids: tuple[str, ...]  # distinct qids in byte order
    raw_qids: np.ndarray  # the same as bytes
    qid_words: np.ndarray  # the same as words
    heads: np.ndarray  # rows where the qid changes (0 first)
    head_codes: np.ndarray  # the code of the qid from each head on
    words: np.ndarray
    hashes: np.ndarray  # _qid_keys and _digest mixed: the same for a pair in runs and qrels

    @cached_property
    def code(self) -> np.ndarray:
        """The code (into ``qids``) of every row."""
        return _row_codes(self.heads, self.head_codes, len(self.hashes))

    def codes_of(self, rows: np.ndarray) -> np.ndarray:
        """The codes of some rows, without making ``code``."""
        return self.head_codes[np.searchsorted(self.heads, rows, side="right") - 1]

    def ids(self) -> list[str]:
        return [_decode(b) for b in _as_bytes(self.words).tolist()]


@dataclass(frozen=True)
class Qrels(_Records):
    grades: np.ndarray

    def as_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {q: {} for q in self.qids}
        for c, d, g in zip(self.code.tolist(), self.ids(), self.grades.tolist()):
            out[self.qids[c]][d] = g
        return out


@dataclass(frozen=True)
class Run(_Records):
    scores: np.ndarray

    def as_pairs(self) -> dict[str, list[tuple[str, float]]]:
        """``{qid: [(docid, score), ...]}`` in file order (not yet ordered)."""
        out: dict[str, list[tuple[str, float]]] = {}
        for c, d, sc in zip(self.code.tolist(), self.ids(), self.scores.tolist()):
            out.setdefault(self.qids[c], []).append((d, sc))
        return out


class _Rows:
    """A file's rows gathered block by block: where each query's rows start, the id
    words, the (qid, id) hashes, and the line map. Only per-row results are kept, never
    offsets, and each block is done with while it is in cache."""

    def __init__(self, capacity: int):
        self.n = 0
        self.capacity = capacity  # an upper bound: pages past the last row are never touched
        self.words: np.ndarray | None = None
        self.hashes = np.empty(capacity, dtype=np.uint64)
        self.head_rows: list[np.ndarray] = []
        self.head_words: list[np.ndarray] = []
        self.last_qid: np.ndarray | None = None
        self.lines = _LineMap()

    def add(self, chunk, qid_first, qid_last, id_first, id_last, line_base, lines) -> int:
        """Gathers one block's rows; returns the row number of its first."""
        lo = self.n
        m = len(qid_first)
        self.lines.add(lo, line_base, lines)
        if m == 0:
            return lo
        qid = _field(chunk, qid_first, qid_last)
        prev = self.last_qid
        width = max(qid.shape[1], 0 if prev is None else prev.shape[1])
        qid = _pad(qid, width)
        change = np.empty(m, dtype=bool)
        change[0] = prev is None or bool(np.any(_pad(prev, width)[0] != qid[0]))
        if width == 1:  # qids of up to 8 bytes (the usual): one comparison per row
            np.not_equal(qid[1:, 0], qid[:-1, 0], out=change[1:])
        else:
            np.any(qid[1:] != qid[:-1], axis=1, out=change[1:])
        heads = np.flatnonzero(change)
        self.head_rows.append(heads + lo)
        self.head_words.append(qid[heads])
        self.last_qid = qid[-1:]
        ids = _field(chunk, id_first, id_last, 0 if self.words is None else self.words.shape[1])
        if self.words is None or ids.shape[1] > self.words.shape[1]:
            wider = np.empty((self.capacity, ids.shape[1]), dtype=np.uint64)
            if self.words is not None:  # a longer id than any before: widen
                wider[:lo, :self.words.shape[1]] = self.words[:lo]
                wider[:lo, self.words.shape[1]:] = 0
            self.words = wider
        self.words[lo:lo + m] = ids
        # The (qid, id) hash of each row; the first row's qid may continue the last block's.
        keys = _qid_keys(qid[heads])
        if len(heads) == 0 or heads[0] != 0:
            keys = np.concatenate((self.last_key, keys))
            heads = np.concatenate(([0], heads))
        np.bitwise_xor(_digest(ids), np.repeat(keys, np.diff(np.append(heads, m))),
                       out=self.hashes[lo:lo + m])
        self.hashes[lo:lo + m] = _mix(self.hashes[lo:lo + m])
        self.last_key = keys[-1:]
        self.n = lo + m
        return lo

    def finish(self, source: str, what: str) -> dict:
        """Query codes; rejects a repeated (qid, id)."""
        n = self.n
        words = self.words[:n] if self.words is not None else np.zeros((0, 1), np.uint64)
        if n:
            width = max(w.shape[1] for w in self.head_words)
            head_words = np.concatenate([_pad(w, width) for w in self.head_words])
            heads = np.concatenate(self.head_rows)
        else:
            head_words = np.zeros((0, 1), dtype=np.uint64)
            heads = np.zeros(0, dtype=np.int64)
        distinct, first, inverse = np.unique(_as_bytes(head_words), return_index=True,
                                             return_inverse=True)
        head_codes = inverse.ravel()
        hashes = self.hashes[:n]
        dup = _first_duplicate(words, hashes, heads, head_codes)
        if dup is not None:
            earlier, again = dup
            doc = _decode(_as_bytes(words[again:again + 1])[0])
            query = head_codes[np.searchsorted(heads, again, side="right") - 1]
            raise InputError(
                f"document {doc!r} {what} twice for query {_decode(distinct[query])!r}"
                f" (first on line {self.lines.line_of(earlier)})",
                source,
                f"line {self.lines.line_of(again)}",
            )
        return {"qids": tuple(_decode(q) for q in distinct.tolist()), "raw_qids": distinct,
                "qid_words": head_words[first], "heads": heads, "head_codes": head_codes,
                "words": words, "hashes": hashes}


def _whole(raw: bytes) -> bool:
    try:
        return abs(int(raw)) <= 1 << 31
    except ValueError:
        return False


def parse_qrels(text, source: str) -> Qrels:
    """Judgments from the bytes of a qrels file (``qid iter docid grade``)."""
    capacity = len(text) // 8 + 1
    rows = _Rows(capacity)
    grades = np.empty(capacity, dtype=np.int64)
    bad = None  # reported once the whole file is split: a malformed line comes first
    for chunk, first, last, line_base, lines in _blocks(text, (0, 2, 3), 4, 4, source):
        at = rows.add(chunk, first[0], last[0], first[1], last[1], line_base, lines)
        grade_text = _as_bytes(_field(chunk, first[2], last[2]))
        try:
            block = grade_text.astype(np.int64)
        except (ValueError, OverflowError):
            block = None
        if block is None or np.any(np.abs(block) > 1 << 31):
            if bad is None:
                row = next(i for i, raw in enumerate(grade_text.tolist()) if not _whole(raw))
                bad = (at + row, grade_text[row])
            continue
        grades[at:at + len(block)] = block
    if bad is not None:
        raise InputError(f"grade {_decode(bad[1])!r} is not a whole number", source,
                         f"line {rows.lines.line_of(bad[0])}")
    return Qrels(**rows.finish(source, "is judged"), grades=grades[:rows.n])


def parse_run(text, source: str) -> Run:
    """Results from the bytes of a run file (``qid Q0 docid rank score tag``)."""
    capacity = len(text) // 12 + 1
    rows = _Rows(capacity)
    scores = np.empty(capacity)
    bad = None  # reported once the whole file is split: a malformed line comes first
    for chunk, first, last, line_base, lines in _blocks(text, (0, 2, 4), 6, None, source):
        at = rows.add(chunk, first[0], last[0], first[1], last[1], line_base, lines)
        block = _parse_scores(chunk, first[2], last[2])
        finite = np.isfinite(block)
        if bad is None and not np.all(finite):
            row = int(np.argmin(finite))
            bad = (at + row, _as_bytes(_field(chunk, first[2, row:row + 1],
                                              last[2, row:row + 1]))[0])
        scores[at:at + len(block)] = block
    if bad is not None:
        raise InputError(f"score {_decode(bad[1])!r} is not a finite number", source,
                         f"line {rows.lines.line_of(bad[0])}")
    return Run(**rows.finish(source, "appears"), scores=scores[:rows.n])


# Measured (benchmarks/bench_mechanisms.py): with the file read into memory instead, evaluate
# on 20,000 queries x 100 results took 1.24x the wall (and held a copy of the 164 MB run).
def _map(path: str, what: str):
    """A file's bytes, memory-mapped when possible (no copy: the parser reads the page
    cache directly), else read. The map lives as long as the parse that uses it; like
    any reader, it assumes the file is not truncated meanwhile."""
    import mmap
    import os
    import stat

    try:
        # Not blocking: a FIFO given as a run would wait for a writer; read_bytes refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and 0 < info.st_size <= _RUN_BYTES_LIMIT:
                return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        pass
    return _read(path, what)  # and its errors: not found, a folder, too big, unreadable


def read_qrels(path: str) -> Qrels:
    return parse_qrels(_map(path, "qrels file"), str(path))


def read_run(path: str) -> Run:
    return parse_run(_map(path, "run file"), str(path))


def _require_utf8(data, source: str, why: str = "a run read by `ci-eval run` holds text ids") -> None:
    """Name the first line that is not UTF-8. Decoded a block at a time, each block ending
    after a newline (never inside a character), so no copy of the file is kept."""
    lo, size, lines = 0, len(data), 0
    while lo < size:
        hi = data.rfind(b"\n", lo, lo + _BLOCK) + 1 or data.find(b"\n", lo + _BLOCK) + 1 or size
        block = data[lo:hi]
        try:
            block.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = lines + block.count(b"\n", 0, exc.start) + 1
            raise InputError(f"not valid UTF-8 ({why})", source, f"line {line}") from None
        lines += block.count(b"\n")
        lo = hi


def read_run_pairs(path: str) -> dict[str, list[tuple[str, float]]]:
    """A run file as ``{qid: [(docid, score), ...]}`` in file order (not yet ordered).

    Unlike ``evaluate``, which compares ids as raw bytes the way trec_eval does, these ids
    become text: bytes that are not UTF-8 are an error, not U+FFFD (``\\xff`` and
    ``\\xfe`` would both become it and two questions would merge into one)."""
    data = _map(path, "run file")
    _require_utf8(data, str(path))
    return parse_run(data, str(path)).as_pairs()


def read_text_qrels_dict(path: str) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """A qrels file as ``{qid: {docid: grade}}`` whose ids become text (a gold set's): bytes
    that are not UTF-8 are an error at their line, as in ``read_run_pairs``. A judgement
    repeated with the same grade (qrels files concatenated, say) is kept once and counted,
    ``{qid: repeats}`` beside the qrels; with another grade it is an error at its line, as
    the other import formats say it."""
    data = _map(path, "qrels file")
    _require_utf8(data, str(path), "a gold set holds text ids")
    text, repeats = _without_repeats(bytes(data).decode("utf-8"), str(path))
    return parse_qrels(text.encode("utf-8") if repeats else data, str(path)).as_dict(), repeats


_TOKEN = re.compile(r"[^\x00-\x20]+")  # the splitter's tokens: bytes above 32 (see _split_general)
_PLAIN_GRADE = re.compile(r"-?[0-9]{1,10}")


def _without_repeats(text: str, source: str) -> tuple[str, dict[str, int]]:
    """The qrels text with each line that repeats an earlier judgement's query, document
    and grade made blank (blank lines are skipped, so every line keeps its number), and the
    repeats per query. A line that is not a plain record is left for the parser to judge."""
    lines = text.split("\n")
    first: dict[tuple[str, str], tuple[int, int]] = {}
    repeats: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        tokens = _TOKEN.findall(line)
        if len(tokens) != 4 or tokens[0].startswith("#") or not _PLAIN_GRADE.fullmatch(tokens[3]) \
                or not _whole(tokens[3].encode()):
            continue
        qid, doc, grade = tokens[0], tokens[2], int(tokens[3])
        seen = first.setdefault((qid, doc), (grade, n))
        if seen[1] == n:
            continue
        if seen[0] != grade:
            raise InputError(f"chunk {doc!r} is judged {seen[0]} at line {seen[1]} and {grade} here: "
                             "one grade per chunk", source, f"line {n}")
        lines[n - 1] = ""
        repeats[qid] = repeats.get(qid, 0) + 1
    return "\n".join(lines), repeats


def read_qrels_dict(path: str) -> dict[str, dict[str, int]]:
    """A qrels file as ``{qid: {docid: grade}}``."""
    return read_qrels(path).as_dict()


