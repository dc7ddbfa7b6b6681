"""What a retriever returned for one question, cleaned into a Ranking or a named failure.

Retrievers are the user's code and fail in every way code can; each failure becomes a
per-question error recorded in the artefact instead of aborting the run.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from itertools import accumulate, chain, repeat
from typing import Any

from ci_eval.core.text import LONE_SURROGATE


class ResultError(ValueError):
    """The retriever's answer for one question cannot be used."""


@dataclass(frozen=True, slots=True)
class Retrieved:
    ids: tuple[str, ...] = ()  # best first, trec_eval's order (score desc, id desc)
    scores: tuple[float, ...] = ()
    latency_ms: float | None = None
    error: str | None = None
    warnings: tuple[str, ...] = ()
    # The same ranking as (id, score) tuples when the retriever gave exactly those (its own
    # immutable tuples, so a row takes them instead of making a tuple a pair); else None.
    pairs: tuple | None = field(default=None, compare=False, repr=False)
    # A pipeline's named stages besides the final list, ((name, ids best first), ...), and a
    # multi-step retriever's calls, (ids of call 1, ids of call 2, ...) (core/measure/stages.py)
    stages: tuple = ()
    calls: tuple = ()

    @property
    def failed(self) -> bool:
        return self.error is not None


# What a per-question warning says, by kind: the run summary counts questions per kind.
DUPLICATES = "duplicate id(s) dropped"
NOT_IN_INDEX = "id(s) not in the index"
NOT_IN_RUN_FILE = "not in the run file"
WARNING_KINDS = (DUPLICATES, NOT_IN_INDEX, NOT_IN_RUN_FILE)


def rank_scores(n: int) -> list[float]:
    """The scores of ``n`` results that came without any: ``n`` for the first down to 1 for
    the last, so trec_eval's score order is the retriever's own. The report knows them by
    this (every top score equal to its count of results) and suggests no cutoff from them."""
    return [float(n - i) for i in range(n)]


def failed(message: str, latency_ms: float | None = None) -> Retrieved:
    return Retrieved(latency_ms=latency_ms, error=message)


# A run stops asking when its first STOP_AFTER questions all fail with the same error (the
# same exception type and message): a retriever that cannot start should cost one message,
# not thousands of identical failures. The questions left are errors too, with this text.
STOP_AFTER = 10
STOPPED_EARLY = "not run: the first {n} questions all failed with the same error"


def stopped_early(n: int = STOP_AFTER) -> Retrieved:
    return failed(STOPPED_EARLY.format(n=n))


def parse_pair(item: Any, position: int) -> tuple[str, float]:
    if isinstance(item, dict):
        if "id" not in item or "score" not in item:
            raise ResultError(f"result {position} needs \"id\" and \"score\"")
        cid, score = item["id"], item["score"]
    elif isinstance(item, (list, tuple)) and len(item) == 2:
        cid, score = item
    else:
        raise ResultError(f"result {position} is not an (id, score) pair or an object")
    if isinstance(cid, bool) or not isinstance(cid, (str, int)):
        raise ResultError(f"result {position} has an id of type {type(cid).__name__}")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        try:  # numpy scalars and Decimals are fine; strings are not
            if isinstance(score, str):
                raise TypeError
            score = float(score)
        except (TypeError, ValueError):
            raise ResultError(f"result {position} has a score of type {type(score).__name__}") from None
    try:
        score = float(score)
    except OverflowError:  # an int past float range, e.g. 10**400
        raise ResultError(f"result {position} has a non-finite score (too large)") from None
    if not math.isfinite(score):
        raise ResultError(f"result {position} has a non-finite score ({score})")
    cid = str(cid)
    if not cid:
        raise ResultError(f"result {position} has an empty id")
    if LONE_SURROGATE.search(cid):  # "\ud800" from JSON: not a character, cannot be written
        raise ResultError(f"result {position} has an id that is not valid Unicode")
    return cid, score


_PAIR_TYPES, _TUPLE, _LIST = {tuple, list}, {tuple}, {list}
_STR, _FLOAT, _TWO = {str}, {float}, {2}


def _plain(raw: Any) -> tuple[tuple, tuple, bool] | None:
    """(ids, scores, whether every pair is a tuple) when ``raw`` is the common case, a list
    of (str, float) pairs with distinct non-empty ids and finite scores strictly descending
    (already trec_eval's order): checked in a few passes that stay in C. None: anything
    else, which ``clean`` takes the long way, naming what is wrong."""
    if type(raw) is not list or not raw:
        return None
    kinds = set(map(type, raw))
    if not kinds <= _PAIR_TYPES or set(map(len, raw)) != _TWO:
        return None
    ids, scores = zip(*raw)
    if set(map(type, ids)) != _STR or set(map(type, scores)) != _FLOAT or not all(ids):
        return None
    # A sum that is finite has no NaN or infinity in it (one that overflows goes the long way).
    if not math.isfinite(sum(scores)) or not all(map(operator.gt, scores, scores[1:])):
        return None
    if len(set(ids)) != len(ids):
        return None
    joined = "".join(ids)
    if not joined.isascii() and LONE_SURROGATE.search(joined):
        return None
    return ids, scores, kinds == _TUPLE


def _not_in_index(ids, known_ids) -> list[str]:
    if known_ids is None or (isinstance(known_ids, frozenset) and known_ids.issuperset(ids)):
        return []
    unknown = [c for c in ids if c not in known_ids]
    return [f"{len(unknown)} {NOT_IN_INDEX}, e.g. {unknown[0]!r}"] if unknown else []


def clean(raw: Any, depth: int, latency_ms: float | None = None, known_ids=None) -> Retrieved:
    """Validate, de-duplicate (first kept), order and cut one question's results."""
    plain = _plain(raw)
    if plain is not None:
        ids, scores = plain[0][:depth], plain[1][:depth]
        pairs = tuple(raw[:depth]) if plain[2] else None
        return Retrieved(ids, scores, latency_ms, None, tuple(_not_in_index(ids, known_ids)), pairs)
    return _clean(raw, depth, latency_ms, known_ids)


def clean_batch(raws: list, depth: int, latencies, known_ids=None) -> list[Retrieved] | None:
    """What ``clean`` makes of each answer of ``raws`` (its latency the same place of
    ``latencies``) when every one is the common case of ``_plain`` with tuple pairs, checked
    over the whole batch in passes that stay in C: the per-answer set-up of those passes is
    most of their cost on answers of a few dozen pairs. None when any answer may not be:
    the caller then cleans each, so every answer keeps its own verdict and words."""
    if not raws or set(map(type, raws)) != _LIST or not all(raws):
        return None
    flat = list(chain.from_iterable(raws))
    if set(map(type, flat)) != _TUPLE:
        return None
    try:
        ids, scores = zip(*flat, strict=True)  # each pair of the same length, and that length 2
    except ValueError:
        return None
    if set(map(type, ids)) != _STR or set(map(type, scores)) != _FLOAT or not all(ids):
        return None
    if not math.isfinite(sum(scores)):
        return None  # a NaN, an infinity, or a sum past a double's range: clean says which
    lengths = list(map(len, raws))
    ends = list(accumulate(lengths))
    starts = [0, *ends[:-1]]
    descending = list(map(operator.gt, scores, scores[1:]))
    for end in starts[1:]:
        descending[end - 1] = True  # the last score of one answer against the first of the next: no order
    if not all(descending):
        return None
    if list(map(len, map(set, map(ids.__getitem__, map(slice, starts, ends))))) != lengths:
        return None
    joined = "".join(ids)
    if not joined.isascii() and LONE_SURROGATE.search(joined):
        return None
    cuts = list(map(slice, starts, map(min, ends, map(operator.add, starts, repeat(depth)))))
    cut_ids = list(map(ids.__getitem__, cuts))
    warnings = (repeat(()) if known_ids is None else
                [tuple(_not_in_index(answer_ids, known_ids)) for answer_ids in cut_ids])
    return list(map(Retrieved, cut_ids, map(scores.__getitem__, cuts), latencies, repeat(None), warnings,
                    map(tuple, map(flat.__getitem__, cuts))))


def _clean(raw: Any, depth: int, latency_ms: float | None, known_ids) -> Retrieved:
    from ci_eval.core.measure.trec_order import order

    if raw is None:
        # A forgotten ``return`` must not read as "found nothing" and score a silent 0.
        raise ResultError("got None instead of a list of (id, score) pairs (a missing return?)")
    if isinstance(raw, (str, bytes, dict)) or not hasattr(raw, "__iter__"):
        raise ResultError(f"expected a list of (id, score) pairs, got {type(raw).__name__}")
    pairs: list[tuple[str, float]] = []
    seen: set[str] = set()
    warnings: list[str] = []
    duplicates = 0
    for position, item in enumerate(raw, 1):
        cid, score = parse_pair(item, position)
        if cid in seen:
            duplicates += 1
            continue
        seen.add(cid)
        pairs.append((cid, score))
    if duplicates:
        warnings.append(f"{duplicates} {DUPLICATES} (first occurrence kept)")
    ranking = order(pairs)
    ids, scores = ranking.ids[:depth], ranking.scores[:depth]
    warnings += _not_in_index(ids, known_ids)
    return Retrieved(ids=ids, scores=scores, latency_ms=latency_ms, warnings=tuple(warnings))


# The most ids a stage or a call keeps: the cap of retriever.depth. Each stage is cut at its
# own depth later, when the run knows its chain (core/measure/stages.py).
STAGE_CAP = 10_000


def clean_answer(raw: Any, depth: int, latency_ms: float | None = None, known_ids=None) -> Retrieved:
    """``clean``, or ``clean_staged`` for an answer with stages or calls (a dict)."""
    if isinstance(raw, dict) and ("stages" in raw or "calls" in raw):
        return clean_staged(raw, depth, latency_ms, known_ids)
    return clean(raw, depth, latency_ms, known_ids)


def clean_staged(msg: dict, depth: int, latency_ms: float | None = None, known_ids=None) -> Retrieved:
    """An answer with named stages, ``{"stages": {"pool": [...], ...}, "results": [...]}``, or
    with several calls, ``{"calls": [[...], [...]]}``: every list passes the same cleaning as
    ``results``, an error naming the stage or call. Without ``results``, a calls answer's
    final list is the calls' ids in order (first occurrence kept), what a cut at k sees."""
    stages, calls = msg.get("stages", {}), msg.get("calls", [])
    if not isinstance(stages, dict):
        raise ResultError(f'"stages" must be an object of named lists, got {type(stages).__name__}')
    if not isinstance(calls, list):
        raise ResultError(f'"calls" must be a list of result lists, got {type(calls).__name__}')
    cleaned_stages = []
    for name, raw in stages.items():
        try:
            cleaned_stages.append((str(name), clean(raw, STAGE_CAP).ids))
        except ResultError as exc:
            raise ResultError(f"stage {name!r}: {exc}") from None
    cleaned_calls = []
    for n, raw in enumerate(calls, 1):
        try:
            cleaned_calls.append(clean(raw, STAGE_CAP).ids)
        except ResultError as exc:
            raise ResultError(f"call {n}: {exc}") from None
    if "results" in msg or not cleaned_calls:
        final = clean(msg.get("results"), depth, latency_ms, known_ids)
    else:
        joined = tuple(dict.fromkeys(cid for ids in cleaned_calls for cid in ids))
        final = clean(list(zip(joined, rank_scores(len(joined)))), depth, latency_ms, known_ids)
    return Retrieved(final.ids, final.scores, latency_ms, None, final.warnings, final.pairs,
                     tuple(cleaned_stages), tuple(cleaned_calls))
