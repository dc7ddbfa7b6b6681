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

Parsing never builds a Python object per line: the file is cut into chunks, field
boundaries come from whitespace transitions, ids become big-endian uint64 words (their
order is the ids' byte order, which gives trec_eval's tie order, and they hash cheaply),
and plain decimal scores are converted column-wise (see ``_parse_scores``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ci_eval.core.metrics import GradeTable
from ci_eval.core.ranking import order_rows
from ci_eval.errors import InputError

_CHUNK = 1 << 22  # bytes per slice: small enough for the caches, large enough for numpy
_BLOCK = 1 << 16  # rows per block in the column-wise steps
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


def _split(text: bytes, fields: tuple[int, ...], least: int, most: int | None,
           source: str) -> _Columns:
    """Offsets of the wanted fields of every record line of ``text``."""
    size = len(text)
    buf = np.frombuffer(text, dtype=np.uint8)
    capacity = text.count(b"\n") + 1
    # (fields x rows): each field's offsets contiguous, as they are used one field at a time
    starts = np.empty((len(fields), capacity), dtype=np.int64)
    ends = np.empty((len(fields), capacity), dtype=np.int64)
    wanted = np.asarray(fields)
    rows = 0
    pos = 0
    line_base = 0
    while pos < size:
        end = size if size - pos <= _CHUNK else text.rfind(b"\n", pos, pos + _CHUNK) + 1
        if end <= pos:  # one line longer than a chunk
            found = text.find(b"\n", pos + _CHUNK)
            end = size if found < 0 else found + 1
        # Each slice starts on the newline before it (a virtual one for the first) and
        # ends on a newline (added after an unterminated last line), so tokens pair up.
        if pos == 0:
            chunk, base = np.concatenate(([10], buf[:end])), -1
        else:
            chunk, base = buf[pos - 1:end], pos - 1
        if end == size and not text.endswith(b"\n"):
            chunk = np.concatenate((chunk, [10]))
        space = chunk <= 32  # blank, tab, CR, LF and other control characters separate
        edges = np.flatnonzero(space[:-1] != space[1:])
        edges += 1
        tok_start, tok_end = edges[0::2], edges[1::2]
        newlines = np.flatnonzero(chunk == 10)
        line_start = newlines[:-1] + 1
        n_lines = len(line_start)
        if (
            len(tok_start) == least * n_lines
            and np.array_equal(tok_start[0::least], line_start)
            and not np.any(chunk[line_start] == 35)
        ):
            # Every line holds exactly the expected columns: no line bookkeeping needed.
            first = np.arange(0, len(tok_start), least)
        else:
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
            first = first_tok[record]
        idx = first[None, :] + wanted[:, None]
        got = len(first)
        np.add(tok_start[idx], base, out=starts[:, rows:rows + got])
        np.add(tok_end[idx], base, out=ends[:, rows:rows + got])
        rows += got
        line_base += n_lines
        pos = end
    return _Columns(text, starts[:, :rows], ends[:, :rows])


def _words(text: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Tokens as (rows x n) big-endian uint64 words, zero padded after the token."""
    lengths = ends - starts
    longest = int(lengths.max()) if len(lengths) else 0
    n = max(1, -(-longest // 8))
    chars = np.zeros((len(starts), 8 * n), dtype=np.uint8)
    if len(starts) and longest:
        buf = np.frombuffer(text, dtype=np.uint8)
        offsets = np.arange(longest)
        # One byte gather per block of rows: cheaper than unaligned 8-byte loads.
        for lo in range(0, len(starts), _BLOCK):
            at = starts[lo:lo + _BLOCK, None] + offsets
            np.minimum(at, len(buf) - 1, out=at)
            block = buf[at]
            block[offsets >= lengths[lo:lo + _BLOCK, None]] = 0
            chars[lo:lo + _BLOCK, :longest] = block
    return chars.view(">u8").astype(np.uint64)


_POW10 = np.array([10.0 ** k for k in range(23)])  # exact doubles up to 1e22


def _parse_scores(words: np.ndarray) -> np.ndarray:
    """Decimal numbers (as id words) to float64, NaN where not a plain decimal.

    Plain decimals (optional sign, digits, at most one point) with at most 22 digits
    after the point and a mantissa below 2**53 are exact: mantissa / 10**digits is one
    correctly rounded division of two exact doubles, which is what strtod returns.
    Anything else (exponents, long mantissas, words) is left as NaN for a slower parser.
    This is several times faster than numpy's string-to-float conversion.
    """
    n, width = words.shape[0], 8 * words.shape[1]
    out = np.full(n, np.nan)
    big = words.byteswap() if np.little_endian else words
    chars = np.ascontiguousarray(big).view(np.uint8).reshape(n, width)
    ten = np.uint64(10)
    for lo in range(0, n, _BLOCK):
        block = chars[lo:lo + _BLOCK]
        used = int(np.count_nonzero(block.any(axis=0)))  # columns holding some character
        # Column-major, so each character position is one contiguous vector.
        cols = np.ascontiguousarray(block[:, :used].T)
        first = cols[0]
        negative = first == 45
        bad = np.zeros(len(first), dtype=bool)
        mantissa = np.zeros(len(first), dtype=np.uint64)
        after = np.zeros(len(first), dtype=np.int64)
        digits = np.zeros(len(first), dtype=np.int64)
        dots = np.zeros(len(first), dtype=np.int64)
        for j in range(used):
            c = cols[j]
            d = c - np.uint8(48)
            is_digit = d < 10
            is_dot = c == 46
            other = ~(is_digit | is_dot | (c == 0))
            if j == 0:
                other &= ~(negative | (c == 43))
            bad |= other
            mantissa = np.where(is_digit, mantissa * ten + d, mantissa)
            dots += is_dot
            digits += is_digit
            after += is_digit & (dots > 0)
        ok = ~bad & (dots <= 1) & (digits > 0) & (digits <= 18)
        ok &= (mantissa < np.uint64(1 << 53)) & (after <= 22)
        value = mantissa.astype(np.float64) / _POW10[np.minimum(after, 22)]
        np.negative(value, out=value, where=negative)
        out[lo:lo + _BLOCK] = np.where(ok, value, np.nan)
    return out


def _as_bytes(words: np.ndarray) -> np.ndarray:
    """Words back to a fixed-width bytes array (numpy drops the zero padding)."""
    big = words.byteswap() if np.little_endian else words
    return np.ascontiguousarray(big).view(f"S{8 * words.shape[1]}").ravel()


def _mix(z: np.ndarray) -> np.ndarray:
    # splitmix64's finaliser: every input bit reaches every output bit.
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _qid_keys(raw_qids: np.ndarray) -> np.ndarray:
    """A 64-bit key per distinct qid, equal for equal bytes within this process."""
    return np.array([hash(q) & 0xFFFFFFFFFFFFFFFF for q in raw_qids.tolist()], dtype=np.uint64)


def _hash(qkey: np.ndarray, words: np.ndarray, seed: int = 0) -> np.ndarray:
    """A 64-bit hash of (query key, id words); equality is always confirmed on the words.

    mix(0) is 0, so all-zero words (padding: an id cannot hold NUL bytes, they separate
    fields) add nothing and ids padded to different widths hash alike.
    """
    h = _mix(qkey + np.uint64((0x9E3779B97F4A7C15 * (seed + 1)) % (1 << 64)))
    for k in range(words.shape[1]):
        h ^= _mix(words[:, k]) * np.uint64(_ODD[k % len(_ODD)])
    return _mix(h)


_ODD = (0xD6E8FEB86659FD93, 0xA0761D6478BD642F, 0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3,
        0x589965CC75374CC3, 0x1D8E4E27C47D124F, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9)


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, code of each row); cheap when rows come grouped."""
    if len(values) == 0:
        return values[:0], np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(values[1:] != values[:-1]) + 1
    heads = np.concatenate(([0], change))
    distinct, inverse = np.unique(values[heads], return_inverse=True)
    runs = np.diff(np.concatenate((heads, [len(values)])))
    return distinct, np.repeat(inverse.ravel(), runs)


def _first_duplicate(code: np.ndarray, words: np.ndarray, h: np.ndarray
                     ) -> tuple[int, int] | None:
    """Rows (earlier, later) of the first repeated (query, id) pair, or None."""
    if len(h) < 2 or not np.any(np.diff(np.sort(h)) == 0):
        return None
    by = np.argsort(h, kind="stable")
    hs = h[by]
    same = np.flatnonzero(hs[1:] == hs[:-1])
    a, b = by[same], by[same + 1]
    real = (code[a] == code[b]) & np.all(words[a] == words[b], axis=1)
    if not np.any(real):
        return None
    a, b = np.minimum(a[real], b[real]), np.maximum(a[real], b[real])
    at = int(np.argmin(b))
    return int(a[at]), int(b[at])


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
    code: np.ndarray
    words: np.ndarray
    hashes: np.ndarray  # _hash(query key, words), seed 0

    def ids(self) -> list[str]:
        return [_decode(b) for b in _as_bytes(self.words).tolist()]

    def qkeys(self) -> np.ndarray:
        return _qid_keys(self.raw_qids)[self.code]


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
    qid = _as_bytes(_words(cols.text, cols.starts[0], cols.ends[0]))
    words = _words(cols.text, cols.starts[1], cols.ends[1])
    distinct, code = _codes(qid)
    hashes = _hash(_qid_keys(distinct)[code], words)
    dup = _first_duplicate(code, words, hashes)
    if dup is not None:
        first, again = dup
        doc = _decode(_as_bytes(words[again:again + 1])[0])
        raise InputError(
            f"document {doc!r} {what} twice for query {_decode(qid[again])!r}"
            f" (first on line {cols.line_of(first)})",
            source,
            f"line {cols.line_of(again)}",
        )
    return {"qids": tuple(_decode(q) for q in distinct.tolist()), "raw_qids": distinct,
            "code": code, "words": words, "hashes": hashes}


def _bad_row(values: list[bytes], ok) -> int:
    return next(row for row, raw in enumerate(values) if not ok(raw))


def _whole(raw: bytes) -> bool:
    try:
        return abs(int(raw)) <= 1 << 31
    except ValueError:
        return False


def _finite(raw: bytes) -> bool:
    try:
        value = float(raw)
    except ValueError:
        return False
    return value - value == 0  # false for inf and nan


def parse_qrels(text: bytes, source: str) -> Qrels:
    """Judgments from the bytes of a qrels file (``qid iter docid grade``)."""
    cols = _split(text, (0, 2, 3), 4, 4, source)
    grade_text = _as_bytes(_words(cols.text, cols.starts[2], cols.ends[2]))
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
    score_words = _words(cols.text, cols.starts[2], cols.ends[2])
    scores = _parse_scores(score_words)
    slow = np.flatnonzero(np.isnan(scores))
    if len(slow):
        try:
            scores[slow] = _as_bytes(score_words[slow]).astype(np.float64)
        except ValueError:
            pass
    if not np.all(np.isfinite(scores)):
        score_text = _as_bytes(score_words)
        row = _bad_row(score_text.tolist(), _finite)
        raise InputError(f"score {_decode(score_text[row])!r} is not a finite number", source,
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


class _HashIndex:
    """Open-addressing table from 64-bit hashes (distinct) to row numbers.

    Looking up millions of run rows in it costs a gather or two per row, against about
    twenty comparisons each for a binary search over the sorted hashes.
    """

    def __init__(self, hashes: np.ndarray):
        bits = max(3, len(hashes).bit_length() + 1)  # load factor at most 1/2
        self.shift = np.uint64(64 - bits)
        self.mask = (1 << bits) - 1
        self.rows = np.full(1 << bits, -1, dtype=np.int64)
        self.keys = np.zeros(1 << bits, dtype=np.uint64)
        pending = np.arange(len(hashes))
        slot = (hashes >> self.shift).astype(np.int64)
        while len(pending):
            want = slot[pending]
            free = self.rows[want] == -1
            # Of the rows wanting the same free slot, the first takes it.
            taken, first = np.unique(want[free], return_index=True)
            winners = pending[free][first]
            self.rows[taken] = winners
            self.keys[taken] = hashes[winners]
            placed = np.zeros(len(pending), dtype=bool)
            placed[np.flatnonzero(free)[first]] = True
            pending = pending[~placed]
            slot[pending] = (slot[pending] + 1) & self.mask

    def find(self, hashes: np.ndarray) -> np.ndarray:
        """Row of each hash in the table, -1 when absent."""
        out = np.full(len(hashes), -1, dtype=np.int64)
        slot = (hashes >> self.shift).astype(np.int64)
        active = np.arange(len(hashes))
        while len(active):
            at = slot[active] if len(active) < len(hashes) else slot
            row = self.rows[at]
            hit = (row >= 0) & (self.keys[at] == hashes[active])
            out[active[hit]] = row[hit]
            active = active[(row >= 0) & ~hit]
            slot[active] = (slot[active] + 1) & self.mask
        return out


def _lookup(qrels: Qrels, run_hashes: np.ndarray, run_slot: np.ndarray, words: np.ndarray,
            seed_hashes) -> np.ndarray:
    """Grade of each run row (-1 when unjudged), by hash join confirmed on the words."""
    qh, h = qrels.hashes, run_hashes
    for seed in range(1, 9):
        if len(np.unique(qh)) == len(qh):
            break
        # Two judgments share a hash (about 1 in 10^9 even for huge qrels): rehash both.
        qh, h = seed_hashes(seed)
    else:  # pragma: no cover - needs 8 colliding 64-bit hashes in a row
        raise RuntimeError("could not hash the qrels without collisions")
    if len(qh) == 0 or len(h) == 0:
        return np.full(len(h), -1.0)
    row = _HashIndex(qh).find(h)
    grade = np.full(len(h), -1.0)
    found = np.flatnonzero(row >= 0)
    if len(found):
        width = max(words.shape[1], qrels.words.shape[1])
        qrow = row[found]
        same = qrels.code[qrow] == run_slot[found]
        same &= np.all(_pad(qrels.words, width)[qrow] == _pad(words[found], width), axis=1)
        hit, qrow = found[same], qrow[same]
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
        code, words, scores, hashes = slot[keep], run.words[keep], run.scores[keep], run.hashes[keep]
    present = np.zeros(n_q, dtype=bool)
    present[code] = True  # before -M: a query cut to nothing is still measured

    perm = order_rows(code, scores, [words[:, k] for k in range(words.shape[1])])
    if perm is not None:
        code, words, hashes = code[perm], words[perm], hashes[perm]
    n = len(code)
    head_at = np.flatnonzero(np.concatenate(([True], code[1:] != code[:-1]))) if n else \
        np.zeros(0, dtype=np.int64)
    rank = np.arange(n) - np.repeat(head_at, np.diff(np.concatenate((head_at, [n]))))
    if max_per_query is not None:
        cut = rank < max_per_query
        code, words, hashes, rank = code[cut], words[cut], hashes[cut], rank[cut]

    def rehash(seed: int):
        run_keys = _qid_keys(qrels.raw_qids)[code]
        return _hash(qrels.qkeys(), qrels.words, seed), _hash(run_keys, words, seed)

    grade = _lookup(qrels, hashes, code, words, rehash)

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
