"""How large a run's artefact can get, known before the retriever is called.

A run whose artefact would pass the size limit a later run reads as its baseline is
refused when the file grows past it, which may be an hour of retrieval in. Most of a row
is known from the gold set (id, text, tags, gold); the rest has a largest form: at most
``depth`` results, a float written in at most 24 characters (``repr`` of
-2.2250738585072014e-308), no id longer than the longest the run knows of (the index
manifest's, else the gold set's). The bound assumes those ids; a retriever answering with
longer ids, or failing with messages longer than a full ranking, can still pass it, and the
write-time check catches that. The ``stages`` key a run with ``[[stages]]`` writes and the
``repeat`` key of a repeated run are counted at their largest too; a retriever's ``calls``
are not (nothing bounds how many calls an answer holds), so only the write-time check
holds them.

Pure: the caller reads the limit and raises.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from ci_eval.core.artefact.artefact import HISTORY_LENGTH
from ci_eval.core.artefact.artefact_writer import artefact_pieces, compact
from ci_eval.core.artefact.repeat import MAX_CHANGED_IDS, MAX_REPEAT
from ci_eval.core.artefact.results import DUPLICATES, NOT_IN_INDEX, STAGE_CAP
from ci_eval.core.artefact.shard import MAX_SHARDS, shard_of
from ci_eval.core.measure.stages import FINAL, StageSpec

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


def stage_row_bytes(chain: Sequence[StageSpec], questions: Sequence) -> list[int]:
    """Each question's entry in the ``stages`` key at its largest (none without stages):
    every gold id ranked in every stage of ``chain`` (the config's, the final list placed),
    at the stage's depth (a packing stage's ranks are within the final list's), and every
    stage adding STAGE_CAP ids."""
    if not chain:
        return [0] * len(questions)
    final = next(s.depth for s in chain if s.name == FINAL)
    digits = [len(str(s.depth if s.depth is not None else (final if s.chars is not None else STAGE_CAP)))
              for s in chain]
    added = len(chain) * (len(str(STAGE_CAP)) + 2) + len(' "added": [],')
    # '  "id": {"gold": G, "ranks": [[...], ...]' and the '},\n' after it
    return [len(compact(q.id).encode("utf-8")) + 32 + len(str(len(q.gold))) + added
            + sum(3 + len(q.gold) * (d + 2) for d in digits) for q in questions]


def stages_bytes(chain: Sequence[StageSpec], questions: Sequence) -> int:
    """The ``stages`` key at its largest: the chain as recorded and every question's entry."""
    if not chain:
        return 0
    frame = len(f' "stages": {{"chain": {compact([s.as_recorded() for s in chain])}, "questions": {{}}}},\n')
    return frame + sum(stage_row_bytes(chain, questions))


def repeat_bytes(questions: Sequence, passes: int | None, longest_error: int) -> int:
    """The ``repeat`` key of a run repeated ``passes`` times, at its largest: MAX_CHANGED_IDS
    questions named with their counts, and a failure in a further pass whose message is at
    most ``longest_error`` characters (the bound a row's error is held to)."""
    if passes is None:
        return 0
    n = len(questions)
    longest = max((len(compact(q.id).encode("utf-8")) for q in questions), default=2)
    named = min(n, MAX_CHANGED_IDS) * (longest + 2 * len(str(MAX_REPEAT)) + 8)
    return (len(f' "repeat": {{"passes": {MAX_REPEAT}, "questions": {n}, "changed": {n}, "flapping": [], '
                f'"failed": {{"questions": {n}, "first": [, ""]}}}},\n') + named + longest + 6 * longest_error)


def head_bytes(head: dict) -> int:
    """The exact bytes of everything before the first row and of the frame around the rows."""
    return sum(len(piece.encode("utf-8")) for piece in artefact_pieces(head, (), dict))


def _ranking_bytes(depth: int, longest_id: int) -> int:
    # what a full ranking takes in a row: the bound a failure's message is held to
    return depth * (longest_id + 2 + 1 + FLOAT + 1)


def artefact_bound(head: dict, questions: Sequence, depth: int, longest_id: int, history,
                   repeat: int | None = None, chain: Sequence[StageSpec] = ()) -> int:
    """An upper bound on the size of the artefact ``head`` and ``questions`` make, with the
    ``stages`` key of a run with ``chain`` and, for a run repeated ``repeat`` times, its
    ``repeat`` key."""
    metrics = head["metrics"]
    tags = {t for q in questions for t in q.tags}
    return (head_bytes(head) + known_bytes(questions)
            + len(questions) * retrieved_bytes(len(metrics), depth, longest_id)
            + end_bytes(metrics, tags, len(questions), head["k"], history)
            + stages_bytes(chain, questions) + repeat_bytes(questions, repeat, _ranking_bytes(depth, longest_id)))


def depth_that_fits(head: dict, questions: Sequence, depth: int, longest_id: int, history,
                    limit: int, least: int, repeat: int | None = None,
                    chain: Sequence[StageSpec] = ()) -> int | None:
    """The largest retriever depth from ``least`` up to ``depth`` whose artefact is surely
    under ``limit``; None when not even ``least`` fits. Only the rankings' share of the bound
    (and the longest failure it allows) changes with the depth (the head written at a
    smaller depth is no longer)."""
    per_row = len(head["metrics"])

    def at(d: int) -> int:
        return len(questions) * retrieved_bytes(per_row, d, longest_id) + repeat_bytes(
            questions, repeat, _ranking_bytes(d, longest_id))

    fixed = artefact_bound(head, questions, depth, longest_id, history, repeat, chain) - at(depth)
    for d in range(depth, least - 1, -1):
        if fixed + at(d) <= limit:
            return d
    return None


def shards_that_fit(head: dict, questions: Sequence, depth: int, longest_id: int, history,
                    limit: int, at_least: int = 2, repeat: int | None = None,
                    chain: Sequence[StageSpec] = ()) -> int | None:
    """The smallest shard count from ``at_least`` whose every part is surely under
    ``limit`` (a part's head also lists its ids and positions); None past MAX_SHARDS."""
    metrics, tags = head["metrics"], {t for q in questions for t in q.tags}
    per_row = retrieved_bytes(len(metrics), depth, longest_id)
    rows = [n + per_row + staged for n, staged in zip(_each_known(questions), stage_row_bytes(chain, questions))]
    listed = [len(compact(q.id).encode("utf-8")) + len(str(len(questions))) + 2 for q in questions]
    # a part's head: this one's without its own shard record, and a record's fixed fields;
    # a part's repeat record names as many questions as the whole run's may
    fixed = (head_bytes({k: v for k, v in head.items() if k != "shard"}) + 1024
             + end_bytes(metrics, tags, len(questions), head["k"], history)
             + stages_bytes(chain, ()) + repeat_bytes(questions, repeat, _ranking_bytes(depth, longest_id)))
    start = max(at_least, math.ceil((sum(rows) + fixed) / limit))
    for count in range(start, MAX_SHARDS + 1):
        parts = [fixed] * count
        for q, row, ids in zip(questions, rows, listed):
            parts[shard_of(q.id, count) - 1] += row + ids
        if max(parts) <= limit:
            return count
    return None
