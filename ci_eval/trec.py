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
byte order is the words' order, which gives trec_eval's tie order and cheap hashing),
and scores are converted by numpy in one call. A 7,000 x 1,000 run parses in about a
second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ci_eval.core.metrics import GradeTable
from ci_eval.core.ranking import order_rows
from ci_eval.errors import InputError

_CHUNK = 1 << 22  # bytes per slice: small enough for the caches, large enough for numpy
_RUN_BYTES_LIMIT = 1 << 36
_PAD = 8  # bytes after the text, so an 8-byte load at any token start stays in bounds
_MASKS = np.array(
    [0] + [((1 << 64) - 1) ^ ((1 << (64 - 8 * n)) - 1) for n in range(1, 8)] + [(1 << 64) - 1],
    dtype=np.uint64,
)  # _MASKS[n] keeps the first n bytes of a big-endian word


@dataclass(frozen=True)
class _Columns:
    """Fields of the records of one file: absolute start and end offsets, (rows x fields)."""

    text: bytes
    starts: np.ndarray
    ends: np.ndarray

    def line_of(self, row: int) -> int:
        return self.text.count(b"\n", 0, int(self.starts[row, 0])) + 1


def _read(path: str, what: str) -> bytes:
    from ci_eval.files import read_bytes

    return read_bytes(path, what, max_bytes=_RUN_BYTES_LIMIT)


def _split(text: bytes, fields: tuple[int, ...], least: int, most: int | None,
           source: str) -> _Columns:
    """Offsets of the wanted fields of every record line of ``text``."""
    if not text.endswith(b"\n"):
        text += b"\n"
    size = len(text)
    text += b" " * _PAD
    buf = np.frombuffer(text, dtype=np.uint8)
    starts_out, ends_out = [], []
    pos = 0
    line_base = 0
    while pos < size:
        end = size if size - pos <= _CHUNK else text.rfind(b"\n", pos, pos + _CHUNK) + 1
        if end <= pos:  # one line longer than a chunk
            end = text.index(b"\n", pos + _CHUNK) + 1
        chunk = buf[pos:end]
        space = chunk <= 32  # blank, tab, CR, LF and other control characters separate
        edges = np.flatnonzero(space[:-1] != space[1:]) + 1
        if not space[0]:
            edges = np.concatenate(([0], edges))
        tok_start, tok_end = edges[0::2], edges[1::2]
        newlines = np.flatnonzero(chunk == 10)
        line_start = np.concatenate(([0], newlines[:-1] + 1))
        n_lines = len(newlines)
        width = least
        if (
            len(tok_start) == width * n_lines
            and np.array_equal(tok_start[0::width], line_start)
            and not np.any(chunk[line_start] == 35)
        ):
            # Every line holds exactly the expected columns: no line bookkeeping needed.
            first = np.arange(0, len(tok_start), width)
        else:
            line = np.searchsorted(newlines, tok_start)
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
        idx = first[:, None] + np.asarray(fields)[None, :]
        starts_out.append(tok_start[idx] + pos)
        ends_out.append(tok_end[idx] + pos)
        line_base += n_lines
        pos = end
    if starts_out:
        starts = np.concatenate(starts_out)
        ends = np.concatenate(ends_out)
    else:
        starts = ends = np.zeros((0, len(fields)), dtype=np.int64)
    return _Columns(text, starts, ends)


def _words(text: bytes, starts: np.ndarray, ends: np.ndarray, n_words: int | None = None
           ) -> np.ndarray:
    """Tokens as (rows x n_words) big-endian uint64 words, zero padded after the token."""
    lengths = ends - starts
    longest = int(lengths.max()) if len(lengths) else 0
    n = max(1, -(-longest // 8)) if n_words is None else n_words
    # Every byte offset of the text read as a big-endian uint64: one gather per word.
    loads = np.ndarray(shape=(len(text) - 7,), dtype=">u8", buffer=text, strides=(1,))
    out = np.empty((len(starts), n), dtype=np.uint64)
    for k in range(n):
        left = np.clip(lengths - 8 * k, 0, 8)
        at = np.minimum(starts + 8 * k, len(text) - 8)
        out[:, k] = loads[at] & _MASKS[left]
    return out


def _as_bytes(words: np.ndarray) -> np.ndarray:
    """Words back to a fixed-width bytes array (numpy drops the zero padding)."""
    return words.astype(">u8").view(f"S{8 * words.shape[1]}").ravel()


def _mix(z: np.ndarray) -> np.ndarray:
    # splitmix64's finaliser: every input bit reaches every output bit.
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _hash(code: np.ndarray, words: np.ndarray, seed: int) -> np.ndarray:
    """A 64-bit hash of (code, id words); equality is always confirmed on the words."""
    h = _mix(code.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15 * (seed + 1) % (1 << 64)))
    for k in range(words.shape[1]):
        h = _mix(h ^ _mix(words[:, k]))
    return h


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, code of each row); cheap when rows come grouped."""
    if len(values) == 0:
        return values[:0], np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(values[1:] != values[:-1]) + 1
    heads = np.concatenate(([0], change))
    distinct, inverse = np.unique(values[heads], return_inverse=True)
    runs = np.diff(np.concatenate((heads, [len(values)])))
    return distinct, np.repeat(inverse.ravel(), runs)


def _first_duplicate(code: np.ndarray, words: np.ndarray) -> tuple[int, int] | None:
    """Rows (earlier, later) of the first repeated (code, id) pair, or None."""
    for seed in (0, 1, 2):
        h = _hash(code, words, seed)
        if not np.any(np.diff(np.sort(h)) == 0):
            return None
        by = np.argsort(h, kind="stable")
        hs = h[by]
        same = np.flatnonzero(hs[1:] == hs[:-1])
        a, b = by[same], by[same + 1]
        real = (code[a] == code[b]) & np.all(words[a] == words[b], axis=1)
        if np.any(real):
            pairs = np.stack([np.minimum(a[real], b[real]), np.maximum(a[real], b[real])], 1)
            first = pairs[np.argmin(pairs[:, 1])]
            return int(first[0]), int(first[1])
    return None


def _pad(words: np.ndarray, n: int) -> np.ndarray:
    if words.shape[1] >= n:
        return words
    return np.concatenate([words, np.zeros((len(words), n - words.shape[1]), np.uint64)], 1)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


# --------------------------------------------------------------------------- parsed files


@dataclass(frozen=True)
class Qrels:
    """Judgments: ``qids`` sorted in byte order; per row a query code, id words, a grade."""

    qids: tuple[str, ...]
    code: np.ndarray
    words: np.ndarray
    grades: np.ndarray
    raw_qids: np.ndarray  # the qids as bytes, sorted (matches ``qids``)

    def as_dict(self) -> dict[str, dict[str, int]]:
        ids = [_decode(b) for b in _as_bytes(self.words).tolist()]
        out: dict[str, dict[str, int]] = {q: {} for q in self.qids}
        for c, d, g in zip(self.code.tolist(), ids, self.grades.tolist()):
            out[self.qids[c]][d] = g
        return out


@dataclass(frozen=True)
class Run:
    """Results: per row the qid (bytes), id words, score and its line (for messages)."""

    qid: np.ndarray
    words: np.ndarray
    scores: np.ndarray
    source: str

    def as_pairs(self) -> dict[str, list[tuple[str, float]]]:
        ids = [_decode(b) for b in _as_bytes(self.words).tolist()]
        out: dict[str, list[tuple[str, float]]] = {}
        for q, d, s in zip(self.qid.tolist(), ids, self.scores.tolist()):
            out.setdefault(_decode(q), []).append((d, s))
        return out


def parse_qrels(text: bytes, source: str) -> Qrels:
    """Judgments from the bytes of a qrels file (``qid iter docid grade``)."""
    cols = _split(text, (0, 2, 3), 4, 4, source)
    qid = _as_bytes(_words(cols.text, cols.starts[:, 0], cols.ends[:, 0]))
    words = _words(cols.text, cols.starts[:, 1], cols.ends[:, 1])
    grade_text = _as_bytes(_words(cols.text, cols.starts[:, 2], cols.ends[:, 2]))
    try:
        grades = grade_text.astype(np.int64)
    except (ValueError, OverflowError):
        grades = None
    if grades is None or np.any(np.abs(grades) > 1 << 31):
        for row, raw in enumerate(grade_text.tolist()):
            try:
                if abs(int(raw)) <= 1 << 31:
                    continue
            except ValueError:
                pass
            raise InputError(
                f"grade {_decode(raw)!r} is not a whole number", source, f"line {cols.line_of(row)}"
            )
    distinct, code = _codes(qid)
    dup = _first_duplicate(code, words)
    if dup is not None:
        doc = _decode(_as_bytes(words[dup[1]:dup[1] + 1])[0])
        raise InputError(
            f"document {doc!r} is judged twice for query {_decode(qid[dup[1]])!r}"
            f" (first on line {cols.line_of(dup[0])})",
            source,
            f"line {cols.line_of(dup[1])}",
        )
    return Qrels(tuple(_decode(q) for q in distinct.tolist()), code, words, grades, distinct)


def parse_run(text: bytes, source: str) -> Run:
    """Results from the bytes of a run file (``qid Q0 docid rank score tag``)."""
    cols = _split(text, (0, 2, 4), 6, None, source)
    qid = _as_bytes(_words(cols.text, cols.starts[:, 0], cols.ends[:, 0]))
    words = _words(cols.text, cols.starts[:, 1], cols.ends[:, 1])
    score_text = _as_bytes(_words(cols.text, cols.starts[:, 2], cols.ends[:, 2]))
    try:
        scores = score_text.astype(np.float64)
    except ValueError:
        scores = None
    if scores is None or not np.all(np.isfinite(scores)):
        for row, raw in enumerate(score_text.tolist()):
            try:
                value = float(raw)
            except ValueError:
                value = None
            if value is None or value != value or value in (float("inf"), float("-inf")):
                raise InputError(
                    f"score {_decode(raw)!r} is not a finite number",
                    source,
                    f"line {cols.line_of(row)}",
                )
    _, code = _codes(qid)
    dup = _first_duplicate(code, words)
    if dup is not None:
        doc = _decode(_as_bytes(words[dup[1]:dup[1] + 1])[0])
        raise InputError(
            f"document {doc!r} appears twice for query {_decode(qid[dup[1]])!r}"
            f" (first on line {cols.line_of(dup[0])})",
            source,
            f"line {cols.line_of(dup[1])}",
        )
    return Run(qid, words, scores, source)


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


def judge(qrels: Qrels, run: Run, *, complete: bool = False, max_per_query: int | None = None,
          relevance_level: int = 1) -> Judged:
    """Join a run with its qrels the way trec_eval does and build the grade table.

    Queries come in qrels order (byte order of the qid). Run queries absent from the
    qrels are ignored; qrels queries absent from the run are left out, or with
    ``complete`` (trec_eval ``-c``) scored as empty rankings. Results are ordered by
    score descending then docid descending, and then cut to ``max_per_query`` (``-M``).
    """
    n_q = len(qrels.qids)
    # Map each run row's qid onto the qrels' sorted qids.
    slot = np.searchsorted(qrels.raw_qids, run.qid)
    slot = np.minimum(slot, max(n_q - 1, 0))
    known = (qrels.raw_qids[slot] == run.qid) if n_q else np.zeros(len(run.qid), bool)
    ignored = sorted({_decode(q) for q in np.unique(run.qid[~known]).tolist()})
    keep = np.flatnonzero(known)
    code = slot[keep]
    words = run.words[keep]
    scores = run.scores[keep]
    perm = order_rows(code, scores, [words[:, k] for k in range(words.shape[1])])
    if perm is not None:
        code, words, scores = code[perm], words[perm], scores[perm]
    # Rank within each query; rows of a query are contiguous now.
    n = len(code)
    head = np.concatenate(([True], code[1:] != code[:-1])) if n else np.zeros(0, bool)
    head_at = np.flatnonzero(head)
    rank = np.arange(n) - np.repeat(head_at, np.diff(np.concatenate((head_at, [n]))))
    if max_per_query is not None:
        cut = rank < max_per_query
        code, words, rank = code[cut], words[cut], rank[cut]
    # Grades by a hash join against the qrels, confirmed on the words.
    width = max(words.shape[1], qrels.words.shape[1])
    words, qwords = _pad(words, width), _pad(qrels.words, width)
    grade = np.full(len(code), -1.0)
    for seed in range(8):
        qh = _hash(qrels.code, qwords, seed)
        by = np.argsort(qh)
        qh_sorted = qh[by]
        if len(qh_sorted) > 1 and np.any(qh_sorted[1:] == qh_sorted[:-1]):
            continue  # two judgments share a hash: try another seed
        if len(qh_sorted):
            h = _hash(code, words, seed)
            at = np.minimum(np.searchsorted(qh_sorted, h), len(qh_sorted) - 1)
            row = by[at]
            hit = (qh_sorted[at] == h) & (qrels.code[row] == code)
            hit &= np.all(qwords[row] == words, axis=1)
            grade = np.where(hit, qrels.grades[row].astype(np.float64), -1.0)
        break
    else:  # pragma: no cover - needs 8 colliding 64-bit hashes
        raise RuntimeError("could not hash the qrels without collisions")
    grade[grade < 0] = -1.0

    present = np.zeros(n_q, dtype=bool)
    present[slot[keep]] = True  # before -M: a query cut to nothing is still measured
    chosen = np.arange(n_q) if complete else np.flatnonzero(present)
    index = np.full(n_q, -1)
    index[chosen] = np.arange(len(chosen))

    lengths = np.bincount(index[code], minlength=len(chosen)) if len(code) else np.zeros(
        len(chosen), dtype=np.int64)
    depth = int(lengths.max()) if len(lengths) else 0
    grades = np.full((len(chosen), depth), -1.0)
    grades[index[code], rank] = grade

    # Each query's judged grades, best first, for num_rel and the ideal DCG.
    qsel = index[qrels.code] >= 0
    qcode = index[qrels.code[qsel]]
    qgrade = qrels.grades[qsel].astype(np.float64)
    by = np.lexsort((-qgrade, qcode))
    qcode, qgrade = qcode[by], qgrade[by]
    counts = np.bincount(qcode, minlength=len(chosen))
    starts = np.cumsum(counts) - counts
    qrank = np.arange(len(qcode)) - starts[qcode]
    judged = np.full((len(chosen), int(counts.max()) if len(counts) else 0), -1.0)
    judged[qcode, qrank] = np.where(qgrade < 0, -1.0, qgrade)

    missing = tuple(qrels.qids[i] for i in np.flatnonzero(~present).tolist())
    qids = tuple(qrels.qids[i] for i in chosen.tolist())
    return Judged(qids, GradeTable(grades, lengths, judged, relevance_level), missing,
                  tuple(ignored))
