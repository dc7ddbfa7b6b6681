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
* Scores are converted by ``_parse_scores``.
* Repeated (query, document) pairs and the join with the qrels go through a 64-bit
  hash of the pair; the hash only proposes, every match is confirmed on the words.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ci_eval.core.metrics import GradeTable
from ci_eval.core.ranking import order_rows
from ci_eval.errors import InputError

_BLOCK = 1 << 20  # bytes of text per splitting step: the temporaries stay in cache
_ROWS = 1 << 14  # rows per step of the column-wise work, for the same reason
_RUN_BYTES_LIMIT = 1 << 36


@dataclass(frozen=True)
class _Columns:
    """Fields of the records of one file: absolute start and end offsets, (fields x rows)."""

    text: bytes
    starts: np.ndarray
    ends: np.ndarray

    def line_of(self, row: int) -> int:
        return self.text.count(b"\n", 0, int(self.starts[0, row])) + 1


def _read(path: str, what: str) -> bytes:
    from ci_eval.files import read_bytes

    return read_bytes(path, what, max_bytes=_RUN_BYTES_LIMIT)


# --------------------------------------------------------------------------- splitting


def _split(text: bytes, fields: tuple[int, ...], least: int, most: int | None,
           source: str) -> _Columns:
    """Offsets of the wanted fields of every record line of ``text``."""
    size = len(text)
    buf = np.frombuffer(text, dtype=np.uint8)
    # A record of `least` tokens takes at least 2 * least bytes with its separators and
    # newline (one less for an unterminated last line): an upper bound on the rows that
    # costs no pass over the text. Only the pages written to are ever touched.
    capacity = size // (2 * least) + 1
    starts = np.empty((len(fields), capacity), dtype=np.int64)
    ends = np.empty((len(fields), capacity), dtype=np.int64)
    wanted = np.asarray(fields)
    rows = 0
    pos = 0
    line_base = 0
    while pos < size:
        end = size if size - pos <= _BLOCK else text.rfind(b"\n", pos, pos + _BLOCK) + 1
        if end <= pos:  # one line longer than a block
            found = text.find(b"\n", pos + _BLOCK)
            end = size if found < 0 else found + 1
        got = _split_plain(buf, pos, end, least, wanted)
        if got is None:
            got = _split_general(buf, pos, end, least, most, wanted, source, line_base)
        first, last, n_lines = got
        n = first.shape[1]
        starts[:, rows:rows + n] = first
        ends[:, rows:rows + n] = last
        rows += n
        line_base += n_lines
        pos = end
    return _Columns(text, starts[:, :rows], ends[:, :rows])


def _split_plain(buf: np.ndarray, pos: int, end: int, k: int, wanted: np.ndarray):
    """Field offsets of a block whose every line holds exactly ``k`` tokens, one
    whitespace byte apart, ending in a newline; None for any other block."""
    chunk = buf[pos:end]
    if chunk[-1] != 10:  # the last block of a file without a final newline
        return None
    at = np.flatnonzero(chunk <= 32)  # blank, tab, CR, LF and other control bytes separate
    if len(at) % k or at[0] == 0:
        return None
    # Two separators side by side: a blank line, leading or repeated blanks, CR LF.
    if np.any(at[1:] - at[:-1] == 1):
        return None
    seps = at.reshape(-1, k)
    kinds = chunk[at].reshape(-1, k)
    # Row by row, each group of k separators must end on a newline and hold no other:
    # then the groups are exactly the lines.
    if not np.all(kinds[:, -1] == 10) or np.any(kinds[:, :-1] == 10):
        return None
    line_start = np.empty(len(seps), dtype=np.int64)
    line_start[0] = 0
    line_start[1:] = seps[:-1, -1] + 1
    if np.any(chunk[line_start] == 35):  # comment lines
        return None
    first = np.empty((len(wanted), len(seps)), dtype=np.int64)
    last = np.empty((len(wanted), len(seps)), dtype=np.int64)
    for i, f in enumerate(wanted.tolist()):
        if f == 0:
            np.add(line_start, pos, out=first[i])
        else:
            np.add(seps[:, f - 1], pos + 1, out=first[i])
        np.add(seps[:, f], pos, out=last[i])
    return first, last, len(seps)


def _split_general(buf: np.ndarray, pos: int, end: int, least: int, most: int | None,
                   wanted: np.ndarray, source: str, line_base: int):
    """Field offsets of any block: tokens counted line by line; comments and blank
    lines skipped; a line with a wrong number of tokens is an error naming its line."""
    # The slice starts on the newline before it (a virtual one at the start of the text)
    # and ends on a newline (added after an unterminated last line), so tokens pair up.
    if pos == 0:
        chunk, base = np.concatenate(([10], buf[:end])), -1
    else:
        chunk, base = buf[pos - 1:end], pos - 1
    if chunk[-1] != 10:
        chunk = np.concatenate((chunk, [10]))
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
    idx = first_tok[record][None, :] + wanted[:, None]
    return tok_start[idx] + base, tok_end[idx] + base, n_lines


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


# _KEEP[v]: a word whose first v bytes (in memory order) are 0xff and the rest 0.
_KEEP = np.frombuffer(b"".join(b"\xff" * v + b"\0" * (8 - v) for v in range(9)), dtype=np.uint64)


def _field(text: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Tokens as (rows x n) uint64 words holding their bytes in text order, zero padded.

    The words compare equal exactly when the tokens do (a token never holds a NUL byte);
    ``_as_bytes`` reads them back as a fixed-width bytes array.
    """
    buf = np.frombuffer(text, dtype=np.uint8)
    n = len(starts)
    lengths = ends - starts
    longest = int(lengths.max()) if n else 0
    nw = max(1, -(-longest // 8))
    out = np.empty((n, nw), dtype=np.uint64)
    for lo in range(0, n, _ROWS):
        hi = min(n, lo + _ROWS)
        block = _window(buf, starts[lo:hi], 8 * nw).view(np.uint64)
        length = lengths[lo:hi]
        for k in range(nw):
            keep = np.clip(length - 8 * k, 0, 8)
            np.bitwise_and(block[:, k], _KEEP[keep], out=out[lo:hi, k])
    return out


def _as_bytes(words: np.ndarray) -> np.ndarray:
    """Words back to a fixed-width bytes array (numpy drops the zero padding)."""
    return np.ascontiguousarray(words).view(f"S{8 * words.shape[1]}").ravel()


_SCORE_WIDTH = 24
_POW10 = np.array([10.0 ** k for k in range(23)])  # exact doubles up to 1e22
_LONG = np.finfo(np.longdouble).nmant >= 63  # at least x87 extended precision
_POW10_LONG = (np.array([10 ** k for k in range(28)], dtype=np.longdouble) if _LONG
               else None)  # exact up to 1e27 with a 64-bit significand


def _eight_digits(w: np.ndarray) -> np.ndarray:
    """Each 64-bit word holding 8 digit values (0-9), the first byte in memory the most
    significant digit, to the number they write (SWAR: pairs, then quads, then eights)."""
    if not np.little_endian:
        w = w.byteswap()
    w = (w * np.uint64(10) + (w >> np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
    w = (w * np.uint64(100) + (w >> np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
    return (w * np.uint64(10000) + (w >> np.uint64(32))) & np.uint64(0xFFFFFFFF)


def _plain_decimals(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Plain decimal tokens (optional sign, digits, at most one point) to float64,
    exactly as strtod rounds them; NaN for anything else.

    A token with at most 19 digits is mantissa M (an exact uint64) over 10**f, f the
    digits after the point. When M < 2**53 and f <= 22, M and 10**f are exact doubles
    and one IEEE division rounds their exact quotient correctly, which is strtod's
    answer. Otherwise, where long double has a 64-bit significand (x87 extended and
    wider), M and 10**f (f <= 27) are exact in it, the quotient is rounded once to 64
    bits and then to 53; double rounding can only go wrong when the first result sits
    exactly halfway between two doubles, and those tokens are left as NaN.
    """
    n = len(starts)
    out = np.full(n, np.nan)
    width = _SCORE_WIDTH
    cols = np.arange(width)
    powers = np.array([10 ** 16, 10 ** 8, 1], dtype=np.uint64)
    for lo in range(0, n, _ROWS):
        hi = min(n, lo + _ROWS)
        end = ends[lo:hi]
        length = end - starts[lo:hi]
        chars = _window(buf, end - width, width)  # the token right-aligned in `width` bytes
        m = hi - lo
        first = np.maximum(width - length, 0)
        lead = chars[np.arange(m), first]
        signed = (lead == 45) | (lead == 43)
        body = cols >= (first + signed)[:, None]
        d = chars - np.uint8(48)
        digit = d < 10
        point = (chars == 46) & body
        points = np.count_nonzero(point, axis=1)
        ndig = np.count_nonzero(digit & body, axis=1)
        good = np.all(digit | point | ~body, axis=1)
        good &= (points <= 1) & (ndig > 0) & (ndig <= 19) & (length <= 21)
        at = np.where(points == 1, np.argmax(point, axis=1), -1)
        frac = np.where(points == 1, width - 1 - at, 0)
        # Squeeze out the point (what precedes it moves one column right) and blank
        # everything left of the digits, which then fill the last ndig columns.
        shifted = np.zeros_like(d)
        shifted[:, 1:] = d[:, :-1]
        d = np.where(cols <= at[:, None], shifted, d)
        d[cols < (width - ndig)[:, None]] = 0
        mantissa = (_eight_digits(d.view(np.uint64)) * powers).sum(axis=1, dtype=np.uint64)
        negative = lead == 45
        fast = good & (mantissa < np.uint64(1 << 53)) & (frac <= 22)
        value = mantissa.astype(np.float64) / _POW10[np.minimum(frac, 22)]
        block = np.where(fast, value, np.nan)
        if _LONG:
            wide = np.flatnonzero(good & ~fast & (frac <= 27))
            if len(wide):
                block[wide] = _wide_quotients(mantissa[wide], frac[wide])
        np.negative(block, out=block, where=negative)
        out[lo:hi] = block
    return out


def _wide_quotients(mantissa: np.ndarray, frac: np.ndarray) -> np.ndarray:
    """mantissa / 10**frac rounded to double through long double; NaN at a halfway point."""
    exact = mantissa.astype(np.longdouble) / _POW10_LONG[frac]
    value = exact.astype(np.float64)
    back = value.astype(np.longdouble)
    toward = np.nextafter(value, np.where(exact > back, np.inf, -np.inf))
    halfway = (back + toward.astype(np.longdouble)) / 2  # exact: 54 bits at most
    return np.where((exact != back) & (exact == halfway), np.nan, value)


def _parse_scores(text: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Scores as float64, NaN where a token is not a finite number."""
    buf = np.frombuffer(text, dtype=np.uint8)
    scores = _plain_decimals(buf, starts, ends)
    slow = np.flatnonzero(np.isnan(scores))
    if len(slow):
        # Exponents, long mantissas, words: numpy's conversion (correctly rounded, as
        # strtod), all at once, or token by token when one of them is not a number.
        raw = _as_bytes(_field(text, starts[slow], ends[slow]))
        try:
            scores[slow] = raw.astype(np.float64)
        except ValueError:
            for i, token in zip(slow.tolist(), raw.tolist()):
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


def _pair_hashes(qid_words: np.ndarray, code: np.ndarray, id_words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's (qid, id), the same in a run and in qrels."""
    qkey = _mix(_mix(_digest(qid_words)) + np.uint64(0x9E3779B97F4A7C15))
    return _mix(_digest(id_words) ^ qkey[code])


def _codes(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct qids as bytes, words of each, code of each row); cheap when rows
    come grouped."""
    n = len(words)
    if n == 0:
        return _as_bytes(words), words, np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(np.any(words[1:] != words[:-1], axis=1)) + 1
    heads = np.concatenate(([0], change))
    distinct, first, inverse = np.unique(_as_bytes(words[heads]), return_index=True,
                                         return_inverse=True)
    runs = np.diff(np.concatenate((heads, [n])))
    return distinct, words[heads[first]], np.repeat(inverse.ravel(), runs)


def _first_duplicate(code: np.ndarray, words: np.ndarray, h: np.ndarray
                     ) -> tuple[int, int] | None:
    """Rows (earlier, later) of the first repeated (query, id) pair, or None.

    A repeated hash only nominates rows; rows are then ordered by their exact keys
    (stable, so equal keys stay in file order) and neighbours compared word by word.
    """
    if len(h) < 2:
        return None
    sorted_h = np.sort(h)
    twice = sorted_h[1:] == sorted_h[:-1]
    if not np.any(twice):
        return None
    rows = np.flatnonzero(np.isin(h, sorted_h[1:][twice]))
    keys = [words[rows, k] for k in reversed(range(words.shape[1]))] + [code[rows]]
    rows = rows[np.lexsort(keys)]
    same = (code[rows[1:]] == code[rows[:-1]]) & np.all(words[rows[1:]] == words[rows[:-1]],
                                                         axis=1)
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
    """Rows of a parsed file: query code (into ``qids``), id words, row hash."""

    qids: tuple[str, ...]  # distinct qids in byte order
    raw_qids: np.ndarray  # the same as bytes
    qid_words: np.ndarray  # the same as words
    code: np.ndarray
    words: np.ndarray
    hashes: np.ndarray  # _pair_hashes: equal (qid, id) pairs hash alike in runs and qrels

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


def _records(cols: _Columns, source: str, what: str) -> dict:
    """Query codes, id words and hashes of a file's rows; rejects a repeated (qid, id)."""
    qid_words = _field(cols.text, cols.starts[0], cols.ends[0])
    words = _field(cols.text, cols.starts[1], cols.ends[1])
    distinct, distinct_words, code = _codes(qid_words)
    hashes = _pair_hashes(distinct_words, code, words)
    dup = _first_duplicate(code, words, hashes)
    if dup is not None:
        first, again = dup
        doc = _decode(_as_bytes(words[again:again + 1])[0])
        raise InputError(
            f"document {doc!r} {what} twice for query {_decode(distinct[code[again]])!r}"
            f" (first on line {cols.line_of(first)})",
            source,
            f"line {cols.line_of(again)}",
        )
    return {"qids": tuple(_decode(q) for q in distinct.tolist()), "raw_qids": distinct,
            "qid_words": distinct_words, "code": code, "words": words, "hashes": hashes}


def _bad_row(values: list[bytes], ok) -> int:
    return next(row for row, raw in enumerate(values) if not ok(raw))


def _whole(raw: bytes) -> bool:
    try:
        return abs(int(raw)) <= 1 << 31
    except ValueError:
        return False


def parse_qrels(text: bytes, source: str) -> Qrels:
    """Judgments from the bytes of a qrels file (``qid iter docid grade``)."""
    cols = _split(text, (0, 2, 3), 4, 4, source)
    grade_text = _as_bytes(_field(cols.text, cols.starts[2], cols.ends[2]))
    try:
        grades = grade_text.astype(np.int64)
    except (ValueError, OverflowError):
        grades = None
    if grades is None or np.any(np.abs(grades) > 1 << 31):
        row = _bad_row(grade_text.tolist(), _whole)
        raise InputError(f"grade {_decode(grade_text[row])!r} is not a whole number", source,
                         f"line {cols.line_of(row)}")
    return Qrels(**_records(cols, source, "is judged"), grades=grades)


def parse_run(text: bytes, source: str) -> Run:
    """Results from the bytes of a run file (``qid Q0 docid rank score tag``)."""
    cols = _split(text, (0, 2, 4), 6, None, source)
    scores = _parse_scores(cols.text, cols.starts[2], cols.ends[2])
    bad = ~np.isfinite(scores)
    if np.any(bad):
        row = int(np.argmax(bad))
        token = _as_bytes(_field(cols.text, cols.starts[2, row:row + 1],
                                 cols.ends[2, row:row + 1]))[0]
        raise InputError(f"score {_decode(token)!r} is not a finite number", source,
                         f"line {cols.line_of(row)}")
    return Run(**_records(cols, source, "appears"), scores=scores)


def read_qrels(path: str) -> Qrels:
    return parse_qrels(_read(path, "qrels file"), str(path))


def read_run(path: str) -> Run:
    return parse_run(_read(path, "run file"), str(path))


def read_run_pairs(path: str) -> dict[str, list[tuple[str, float]]]:
    """A run file as ``{qid: [(docid, score), ...]}`` in file order (not yet ordered)."""
    return read_run(path).as_pairs()


def read_qrels_dict(path: str) -> dict[str, dict[str, int]]:
    """A qrels file as ``{qid: {docid: grade}}``."""
    return read_qrels(path).as_dict()


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class Judged:
    """What ``evaluate`` measures: the queries in trec_eval's order and their grade table."""

    qids: tuple[str, ...]
    table: GradeTable
    missing: tuple[str, ...]  # qrels queries without results (scored 0 only with -c)
    ignored: tuple[str, ...]  # run queries without judgments (never scored)


def _exact_rows(qrels: Qrels, slot: np.ndarray, words: np.ndarray) -> np.ndarray:
    """The qrels row judging each (slot, id) row, -1 where none: an exact sort-merge."""
    width = max(words.shape[1], qrels.words.shape[1])
    both_words = np.concatenate([_pad(qrels.words, width), _pad(words, width)])
    both_slot = np.concatenate([qrels.code, slot])
    side = np.concatenate([np.zeros(len(qrels.code), np.int8), np.ones(len(slot), np.int8)])
    # Equal keys: the judgment (side 0) sorts right before the rows it judges.
    by = np.lexsort([side] + [both_words[:, k] for k in reversed(range(width))] + [both_slot])
    n_q = len(qrels.code)
    is_q = by < n_q
    last_q = np.maximum.accumulate(np.where(is_q, np.arange(len(by)), -1))
    out = np.full(len(slot), -1, dtype=np.int64)
    run_at = np.flatnonzero(~is_q & (last_q >= 0))
    qrow = by[last_q[run_at]]
    row = by[run_at] - n_q
    same = (qrels.code[qrow] == slot[row]) & np.all(_pad(qrels.words, width)[qrow]
                                                    == _pad(words[row], width), axis=1)
    out[row[same]] = qrow[same]
    return out


def _lookup(qrels: Qrels, hashes: np.ndarray, slot: np.ndarray, words: np.ndarray
            ) -> np.ndarray:
    """Grade of each run row (-1 when unjudged or judged negative).

    The rows' (qid, id) hashes go through a byte-per-slot filter holding the judgments'
    hashes (one probe per row, in a table that fits in cache); the few rows that pass
    are found among the judgments' sorted hashes and confirmed on query and words.
    """
    grade = np.full(len(hashes), -1.0)
    n_q = len(qrels.hashes)
    if n_q == 0 or len(hashes) == 0:
        return grade
    bits = min(26, max(10, (16 * n_q).bit_length()))
    shift = np.uint64(64 - bits)
    table = np.zeros(1 << bits, dtype=bool)
    table[(qrels.hashes >> shift).astype(np.intp)] = True
    cand = np.flatnonzero(table[(hashes >> shift).astype(np.intp)])
    if len(cand) == 0:
        return grade
    by = np.argsort(qrels.hashes, kind="stable")
    sorted_h = qrels.hashes[by]
    if np.any(sorted_h[1:] == sorted_h[:-1]):
        # Two judgments share a 64-bit hash: match the candidates exactly instead.
        qrow = _exact_rows(qrels, slot[cand], words[cand])
        found = qrow >= 0
        hit, qrow = cand[found], qrow[found]
    else:
        at = np.minimum(np.searchsorted(sorted_h, hashes[cand]), n_q - 1)
        match = sorted_h[at] == hashes[cand]
        hit, qrow = cand[match], by[at[match]]
        width = max(words.shape[1], qrels.words.shape[1])
        same = qrels.code[qrow] == slot[hit]
        same &= np.all(_pad(qrels.words[qrow], width) == _pad(words[hit], width), axis=1)
        hit, qrow = hit[same], qrow[same]
    grade[hit] = qrels.grades[qrow]
    grade[grade < 0] = -1.0  # a negative judgment counts as unjudged
    return grade


def judge(qrels: Qrels, run: Run, *, complete: bool = False, max_per_query: int | None = None,
          relevance_level: int = 1) -> Judged:
    """Join a run with its qrels the way trec_eval does and build the grade table.

    Queries come in qrels order (byte order of the qid). Run queries absent from the
    qrels are ignored; qrels queries absent from the run are left out, or with
    ``complete`` (trec_eval ``-c``) scored as empty rankings. Results are ordered by
    score descending then docid descending, and then cut to ``max_per_query`` (``-M``).
    """
    n_q = len(qrels.qids)
    # Each distinct run qid's slot among the qrels qids, -1 when the qrels lack it.
    slot_of = np.searchsorted(qrels.raw_qids, run.raw_qids)
    slot_of = np.minimum(slot_of, max(n_q - 1, 0))
    if n_q:
        slot_of = np.where(qrels.raw_qids[slot_of] == run.raw_qids, slot_of, -1)
    else:
        slot_of = np.full(len(run.raw_qids), -1)
    ignored = tuple(q for q, s in zip(run.qids, slot_of.tolist()) if s < 0)
    slot = slot_of[run.code]
    keep = slot >= 0
    if np.all(keep):
        code, words, scores, hashes = slot, run.words, run.scores, run.hashes
    else:
        code, words, scores, hashes = (slot[keep], run.words[keep], run.scores[keep],
                                       run.hashes[keep])
    present = np.zeros(n_q, dtype=bool)
    present[code] = True  # before -M: a query cut to nothing is still measured

    # Grades in file order (the hashes are the same in the run and the qrels), then the
    # rows put in trec_eval's order.
    grade = _lookup(qrels, hashes, code, words)
    perm = order_rows(code, scores, _as_bytes(words))
    if perm is not None:
        code, grade = code[perm], grade[perm]
    n = len(code)
    head_at = np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1]))) if n else \
        np.zeros(0, dtype=np.int64)
    rank = np.arange(n) - np.repeat(head_at, np.diff(np.concatenate((head_at, [n]))))
    if max_per_query is not None:
        cut = rank < max_per_query
        code, grade, rank = code[cut], grade[cut], rank[cut]

    chosen = np.arange(n_q) if complete else np.flatnonzero(present)
    index = np.full(n_q, -1)
    index[chosen] = np.arange(len(chosen))
    row_q = index[code]
    lengths = np.bincount(row_q, minlength=len(chosen)).astype(np.int64)
    depth = int(lengths.max()) if len(lengths) else 0
    grades = np.full((len(chosen), depth), -1.0)
    grades[row_q, rank] = grade

    # Each query's judged grades, best first, for num_rel and the ideal DCG.
    qsel = index[qrels.code] >= 0
    qcode = index[qrels.code[qsel]]
    qgrade = qrels.grades[qsel].astype(np.float64)
    by = np.lexsort((-qgrade, qcode))
    qcode, qgrade = qcode[by], qgrade[by]
    counts = np.bincount(qcode, minlength=len(chosen))
    qrank = np.arange(len(qcode)) - (np.cumsum(counts) - counts)[qcode]
    judged = np.full((len(chosen), int(counts.max()) if len(counts) else 0), -1.0)
    judged[qcode, qrank] = np.where(qgrade < 0, -1.0, qgrade)

    missing = tuple(qrels.qids[i] for i in np.flatnonzero(~present).tolist())
    qids = tuple(qrels.qids[i] for i in chosen.tolist())
    table = GradeTable(grades, lengths, judged, relevance_level)
    return Judged(qids, table, missing, ignored)
