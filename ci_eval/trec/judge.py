"""Joining a parsed run with parsed qrels: which retrieved documents are relevant, in
trec_eval's order (score descending, then document id descending), with their grades."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ci_eval.core.measure.metrics import GradeTable, judged_matrix
from ci_eval.core.measure.ranking import order_moves
from ci_eval.trec.parse import Qrels, Run, _pad


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


def _lookup(qrels: Qrels, run: Run, slot_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The run rows judged 0 or more, ascending, and their grades.

    The rows' (qid, id) hashes (the same in a run and in qrels) go through a
    bit-per-slot filter holding the judgments' hashes: one probe per row into a table
    that fits in cache, a block of rows at a time. The few rows that pass (the judged
    ones and about one in thirty others) look up the judgment owning their slot, and
    every match is confirmed on query and words.
    """
    none = np.zeros(0, dtype=np.int64), np.zeros(0)
    n_j, n = len(qrels.hashes), len(run.hashes)
    if n_j == 0 or n == 0:
        return none
    bits = min(26, max(10, (16 * n_j).bit_length()))
    shift = np.uint64(64 - bits)
    slot_j = (qrels.hashes >> shift).view(np.int64)
    table = np.zeros(1 << bits, dtype=bool)
    table[slot_j] = True
    # A bit per slot: at 16 slots a judgment the filter of 140,000 judgments is 512 KB,
    # which stays in a core's cache while millions of rows probe it in random order.
    packed = np.packbits(table, bitorder="little")
    step = 1 << 16
    cand = np.concatenate([_probe(packed, run.hashes[lo:lo + step] >> shift) + lo
                           for lo in range(0, n, step)])
    if len(cand) == 0:
        return none
    # The judgment in each candidate's slot: one gather, when the slot holds one judgment
    # (when it holds several, they are searched among the judgments' sorted hashes).
    # Half the table in 32 bits: it is as big as the filter's slots, written whole.
    owner = np.full(1 << bits, -1, dtype=np.int32 if n_j < 1 << 31 else np.int64)
    owner[slot_j] = np.arange(n_j)
    crowded = slot_j[owner[slot_j] != np.arange(n_j)]
    owner[crowded] = -2
    qrow = owner[(run.hashes[cand] >> shift).view(np.int64)]
    many = np.flatnonzero(qrow == -2)
    if len(many):
        by = np.argsort(qrels.hashes, kind="stable")
        sorted_h = qrels.hashes[by]
        if np.any(sorted_h[1:] == sorted_h[:-1]):
            # Two judgments share a 64-bit hash: match the candidates exactly instead.
            exact = _exact_rows(qrels, slot_of[run.codes_of(cand)], run.words[cand])
            found = np.flatnonzero(exact >= 0)
            hit, qrow = cand[found], exact[found]
            return _judged_hits(qrels, hit, qrow)
        at = np.minimum(np.searchsorted(sorted_h, run.hashes[cand[many]]), n_j - 1)
        qrow[many] = by[at]
    match = np.flatnonzero(qrels.hashes[qrow] == run.hashes[cand])
    hit, qrow = cand[match], qrow[match]
    width = max(run.words.shape[1], qrels.words.shape[1])
    same = qrels.code[qrow] == slot_of[run.codes_of(hit)]
    same &= np.all(_pad(qrels.words[qrow], width) == _pad(run.words[hit], width), axis=1)
    return _judged_hits(qrels, hit[same], qrow[same])


def _probe(packed: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """The positions of ``slots`` whose bit is set in ``packed`` (little bit order)."""
    byte = packed[(slots >> np.uint64(3)).view(np.int64)]
    return np.flatnonzero((byte >> (slots & np.uint64(7)).astype(np.uint8)) & np.uint8(1))


def _judged_hits(qrels: Qrels, hit: np.ndarray, qrow: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The matched rows whose judgment is 0 or more, and their grades as floats."""
    grade = qrels.grades[qrow]
    judged = grade >= 0  # a negative judgment counts as unjudged
    return hit[judged], grade[judged].astype(np.float64)


def _ranks(run: Run, hit: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """The 0-based rank of each judged row ``hit`` in trec_eval's order within its query,
    and each run query's result count (indexed by the run's query code)."""
    # trec_eval's order within each run query (ignored queries go along: they are cheaper
    # to order than to cut out, and no row of theirs is judged).
    n = len(run.hashes)
    perm, moves = order_moves(None, run.scores, run.words, run.heads, run.head_codes)
    if perm is None:
        position, heads, head_codes = hit, run.heads, run.head_codes
    else:  # the file was not grouped by query, or not in score order
        inverse = np.empty(n, dtype=np.int64)
        inverse[perm] = np.arange(n)
        ordered = run.code[perm]
        position = inverse[hit]
        heads = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        head_codes = ordered[heads]
    if moves is not None:  # ties put in id order: follow the judged rows that moved
        rows, inner = moves
        back = np.empty_like(inner)
        back[inner] = np.arange(len(inner))
        at = np.minimum(np.searchsorted(rows, position), len(rows) - 1)
        position = np.where(rows[at] == position, rows[back[at]], position)
    first_at = np.zeros(n_codes, dtype=np.int64)
    count = np.zeros(n_codes, dtype=np.int64)
    first_at[head_codes] = heads
    count[head_codes] = np.diff(np.append(heads, n))
    return position - first_at[run.codes_of(hit)], count


def judge(qrels: Qrels, run: Run, *, complete: bool = False, max_per_query: int | None = None,
          relevance_level: int = 1) -> Judged:
    """Join a run with its qrels the way trec_eval does and build the grade table.

    Queries come in qrels order (byte order of the qid). Run queries absent from the
    qrels are ignored; qrels queries absent from the run are left out, or with
    ``complete`` (trec_eval ``-c``) scored as empty rankings. Results are ordered by
    score descending then docid descending, and then cut to ``max_per_query`` (``-M``).

    Only the judged rows are followed one by one: the ranks come from each query's
    first row in trec_eval's order, which is the file's order for a run written in
    rank order (then ``order_rows`` finds nothing to do).
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
    present = np.zeros(n_q, dtype=bool)
    present[slot_of[slot_of >= 0]] = True  # before -M: a query cut to nothing still counts

    hit, grade = _lookup(qrels, run, slot_of)
    rank, count = _ranks(run, hit, len(slot_of))
    hit_code = run.codes_of(hit)
    if max_per_query is not None:
        kept = rank < max_per_query
        hit_code, grade, rank = hit_code[kept], grade[kept], rank[kept]
        count = np.minimum(count, max_per_query)

    chosen = np.arange(n_q) if complete else np.flatnonzero(present)
    index = np.full(n_q, -1)
    index[chosen] = np.arange(len(chosen))
    lengths = np.zeros(len(chosen), dtype=np.int64)
    measured = slot_of >= 0
    lengths[index[slot_of[measured]]] = count[measured]
    # Each query's judged grades, best first, for num_rel and the ideal DCG.
    qsel = index[qrels.code] >= 0
    judged = judged_matrix(len(chosen), index[qrels.code[qsel]], qrels.grades[qsel])
    table = GradeTable.from_hits(len(chosen), index[slot_of[hit_code]], rank, grade, lengths,
                                 judged, relevance_level)
    missing = tuple(qrels.qids[i] for i in np.flatnonzero(~present).tolist())
    qids = tuple(qrels.qids[i] for i in chosen.tolist())
    return Judged(qids, table, missing, ignored)
