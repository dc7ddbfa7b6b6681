"""How large a run's artefact can get, known before the retriever is called.

A run whose artefact would pass the size limit a later run reads as its baseline is
refused when the file grows past it, which may be an hour of retrieval in. Most of a row
is known from the gold set (id, text, tags, gold); the rest has a largest form: at most
``depth`` results, a float written in at most 24 characters (``repr`` of
-2.2250738585072014e-308), no id longer than the longest the run knows of (the index
manifest's, else the gold set's). The bound assumes those ids; a retriever answering with
longer ids, or failing with messages longer than a full ranking, can still pass it, and the
write-time check catches that.

Pure: the caller reads the limit and raises.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from ci_eval.core.artefact.artefact import HISTORY_LENGTH
from ci_eval.core.artefact.artefact_writer import artefact_pieces, compact
from ci_eval.core.artefact.results import DUPLICATES, NOT_IN_INDEX
from ci_eval.core.artefact.shard import MAX_SHARDS, shard_of

LONGEST_FLOAT = -2.2250738585072014e-308
FLOAT = len(repr(LONGEST_FLOAT))  # 24
# The two warnings a cleaned answer can carry, with a count of up to 9 digits.
_WARNINGS = (f"999999999 {DUPLICATES} (first occurrence kept)", f"999999999 {NOT_IN_INDEX}, e.g. ''")
_BATCH = 2048


def retrieved_bytes(metrics: int, depth: int, longest_id: int) -> int:
    """A row's bytes outside the gold set's fields, at their largest."""
    values = 2 + metrics * (FLOAT + 1)
    ranking = 2 + depth * (2 + (longest_id + 2) + 1 + FLOAT + 1)
    warnings = 2 + sum(len(w) + 2 + 1 + longest_id for w in _WARNINGS)
    return (2 + 2 + 2 + 15  # "  " before, ",\n" after, the brackets, 15 commas
            + len("false") + len('"unanswerable"') + values + max(4, len(str(depth)))
            + 3 * FLOAT + len("false")  # top_score, latency_ms, judged_at_k, answer_correct
            + len("null") + warnings + ranking)  # no error


# id, question, tags, gold, and gold again for ``stale`` (a subset of the gold ids, each
# written shorter than its [id, grade] pair); the tuple's encoding is 6 bytes more than the
# fields (brackets, 4 commas), which retrieved_bytes counts already.
_known = operator.attrgetter("id", "question", "tags", "gold", "gold")


def known_bytes(questions: Sequence) -> int:
    """The gold set's fields of every question's row, exactly as large as written (or
    larger), encoded a batch at a time."""
    total = 0
    for start in range(0, len(questions), _BATCH):
        batch = list(map(_known, questions[start:start + _BATCH]))
        total += len(compact(batch).encode("utf-8")) - len(batch) - 1 - 6 * len(batch)
    return total


def _each_known(questions: Sequence) -> list[int]:
    return [len(compact(_known(q)).encode("utf-8")) - 6 for q in questions]


def end_bytes(metrics: Sequence[str], tags, questions: int, k: int, history) -> int:
    """The keys written after the rows, at their largest: the summary's every float at 24
    characters and count at ``questions``, ``history`` as given (or HISTORY_LENGTH entries
    when it comes later), and the cache record."""
    group = {"count": questions, "means": dict.fromkeys(metrics, LONGEST_FLOAT)}
    counts = dict.fromkeys(("questions", "ids"), questions)
    summary = {"overall": group, "by_tag": dict.fromkeys(tags, group), "stale": counts,
               "unanswerable": {"count": questions, "abstained": questions, "cutoff": LONGEST_FLOAT},
               "errors": questions, "latency_ms": dict.fromkeys(("mean", "p50", "p95"), LONGEST_FLOAT),
               "judged_at_k": {"k": k, "mean": LONGEST_FLOAT}}
    if history is None or callable(history):
        entry = {"sha": "0" * 40, "created_at": "0" * 40, "index_version": "0" * 500,
                 "means": dict.fromkeys(metrics, LONGEST_FLOAT)}
        history = [entry] * HISTORY_LENGTH
    tail = {"summary": summary, "history": list(history), "cache": {"hits": questions, "misses": questions}}
    # 1: the comma after the rows' closing bracket
    return 1 + sum(len(f" {compact(key)}: {compact(value)},\n".encode()) for key, value in tail.items())


def head_bytes(head: dict) -> int:
    """The exact bytes of everything before the first row and of the frame around the rows."""
    return sum(len(piece.encode("utf-8")) for piece in artefact_pieces(head, (), dict))


def artefact_bound(head: dict, questions: Sequence, depth: int, longest_id: int, history) -> int:
    """An upper bound on the size of the artefact ``head`` and ``questions`` make."""
    metrics = head["metrics"]
    tags = {t for q in questions for t in q.tags}
    return (head_bytes(head) + known_bytes(questions)
            + len(questions) * retrieved_bytes(len(metrics), depth, longest_id)
            + end_bytes(metrics, tags, len(questions), head["k"], history))


def depth_that_fits(head: dict, questions: Sequence, depth: int, longest_id: int, history,
                    limit: int, least: int) -> int | None:
    """The largest retriever depth from ``least`` up to ``depth`` whose artefact is surely
    under ``limit``; None when not even ``least`` fits. Only the rankings' share of the bound
    changes with the depth (the head written at a smaller depth is no longer)."""
    per_row = len(head["metrics"])
    fixed = artefact_bound(head, questions, depth, longest_id, history) - len(questions) * retrieved_bytes(
        per_row, depth, longest_id)
    for d in range(depth, least - 1, -1):
        if fixed + len(questions) * retrieved_bytes(per_row, d, longest_id) <= limit:
            return d
    return None


def shards_that_fit(head: dict, questions: Sequence, depth: int, longest_id: int, history,
                    limit: int, at_least: int = 2) -> int | None:
    """The smallest shard count from ``at_least`` whose every part is surely under
    ``limit`` (a part's head also lists its ids and positions); None past MAX_SHARDS."""
    metrics, tags = head["metrics"], {t for q in questions for t in q.tags}
    per_row = retrieved_bytes(len(metrics), depth, longest_id)
    rows = [n + per_row for n in _each_known(questions)]
    listed = [len(compact(q.id).encode("utf-8")) + len(str(len(questions))) + 2 for q in questions]
    # a part's head: this one's without its own shard record, and a record's fixed fields
    fixed = (head_bytes({k: v for k, v in head.items() if k != "shard"}) + 1024
             + end_bytes(metrics, tags, len(questions), head["k"], history))
    start = max(at_least, math.ceil((sum(rows) + fixed) / limit))
    for count in range(start, MAX_SHARDS + 1):
        parts = [fixed] * count
        for q, row, ids in zip(questions, rows, listed):
            parts[shard_of(q.id, count) - 1] += row + ids
        if max(parts) <= limit:
            return count
    return None
