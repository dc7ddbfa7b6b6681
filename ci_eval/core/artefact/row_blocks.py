"""A block of version 2 question rows checked and cut into fields at once.

Checking a row field by field in Python (core/artefact/artefact_rows.py, then the meaning checks and
the finiteness of its numbers) costs a few dozen calls a row, most of reading an artefact
once json's C parser is done. Here a block of rows (a few thousand, one ``json.loads``) is
checked field by field over the whole block: each field's values are one tuple
(``zip(*rows)``), the pairs of every ranking and gold list one flat run, and each rule is a
``set`` of their types, a ``min`` or ``max`` of their lengths or values, run by the
interpreter's C loops. The verdict is the per-row one exactly, for the values json gives
(exact types): ``checked_block`` returns the block's fields when every row passes
``question_row_v2_valid``, ``row_means`` and ``row_finite``, and None otherwise, or when a
value is of a subclass of json's types (the per-row path then judges each row and words any
refusal as before).

Numbers: the per-row path refuses a row whose numbers' sum is not finite (a number that
overflowed to inf, or a sum that overflows). The block's absolute values are summed once;
when that sum is far below the largest float, no row's own sum can overflow and every row
passes; otherwise (huge or non-finite numbers) each row is summed on its own, as before.

Measured (benchmarks/bench_mechanisms.py, a shared two-core machine at load 6 to 9): with
this switched off (every row checked on its own), ``ci-eval action`` at 100,000 questions
took 1.36x the wall and 1.12x the CPU (median 73.8 s against 54.2 s; the baseline's read is
where it counts).
"""

from __future__ import annotations

import math
from itertools import chain, compress, repeat
from operator import is_not

from ci_eval.core.artefact.artefact_checks import METRIC_RANGE
from ci_eval.core.artefact.question_row import FIELD, QUESTION_FIELDS

_NONE = type(None)
_STATUSES = frozenset(("ok", "stale", "unanswerable", "error"))
_SAFE_TOTAL = 1e300  # a block whose absolute values sum below this has no row sum near overflow


class RowBlock:
    """A checked block: ``fields``, one tuple per field of QUESTION_FIELDS over the rows;
    each ranking as a dict whose keys are its chunk ids, best first, those ids as one flat run
    and each ranking's length, and the gold pairs' ids and grades as flat runs with each row's count (``gold_lens``)."""

    __slots__ = ("fields", "rankings", "ranking_ids", "ranking_lens", "gold_ids", "gold_grades", "gold_lens")

    def __init__(self, fields, rankings: list, ids: list, gold):
        self.fields = fields
        self.rankings = rankings  # each row's chunk ids as a dict's keys, best first
        self.ranking_ids = ids  # the same ids as one flat run
        self.ranking_lens = list(map(len, rankings))
        _dicts, self.gold_ids, self.gold_grades = gold
        self.gold_lens = list(map(len, fields[FIELD["gold"]]))

    def __len__(self) -> int:
        return len(self.fields[0])

    def field(self, name: str) -> tuple:
        return self.fields[FIELD[name]]


def _kinds_are(values, *classes, but=bool) -> bool:
    """``isinstance(v, classes) and not isinstance(v, but)`` for every value, asked of the
    block's few distinct types (``but``: bool is an int, never a number here)."""
    return all(issubclass(kind, classes) and not issubclass(kind, but) for kind in set(map(type, values)))


def _lists(values) -> bool:
    return _kinds_are(values, list, but=())


def _longest(values) -> int:
    return max(map(len, values), default=0)


def _strings_within(values, max_length: int) -> bool:
    """Every one of ``values`` a str of at most ``max_length`` characters (``str.join``
    refuses anything but a str)."""
    try:
        "".join(values)
    except TypeError:
        return False
    return _longest(values) <= max_length


def _lists_of_strings(lists, max_items: int, max_length: int) -> bool:
    """Each of ``lists`` a list of at most ``max_items`` strings, each at most ``max_length``."""
    if not _lists(lists) or _longest(lists) > max_items:
        return False
    return _strings_within(list(chain.from_iterable(lists)), max_length)


def _present(values) -> list:
    return list(compress(values, map(is_not, values, repeat(None))))


def _whole(values, low: int, high: int | None = None) -> bool:
    """Every value an integer (a float only when whole) within [low, high]: ``_integer`` of
    the per-row check. A float is whole only when ``is_integer``, which NaN and inf are not,
    so min and max see no NaN."""
    if not _kinds_are(values, int, float):
        return False
    if any(issubclass(kind, float) for kind in set(map(type, values))):
        if not all(v.is_integer() for v in values if isinstance(v, float)):
            return False
    return not values or (min(values) >= low and (high is None or max(values) <= high))


def _pairs(lists, max_items: int, exact: bool):
    """Each of ``lists`` a list of at most ``max_items`` [chunk id, value] pairs, each id a
    str of at most 1,000 characters and named once in its list: (each list as a dict, its
    ids and values as flat runs), or None. A dict of a list's pairs is what finds a
    repeated id (it is shorter than the list) and keeps the ids in order. ``exact``: the
    lists, pairs and ids of exactly json's types, as the per-row ranking check asks."""
    if not (set(map(type, lists)) <= {list} if exact else _lists(lists)) or _longest(lists) > max_items:
        return None
    pairs = list(chain.from_iterable(lists))
    if not (set(map(type, pairs)) <= {list} if exact else _lists(pairs)):
        return None
    try:
        dicts = list(map(dict, lists))
    except (TypeError, ValueError):  # a pair of another length, or an unhashable id
        return None
    if sum(map(len, dicts)) != len(pairs):
        return None
    ids = list(chain.from_iterable(dicts))
    if not (set(map(type, ids)) <= {str} and _longest(ids) <= 1000 if exact else _strings_within(ids, 1000)):
        return None
    return dicts, ids, list(chain.from_iterable(map(dict.values, dicts)))


def _scalars_valid(fields) -> bool:
    """The row's single values: id, text, flag, status, ranks and the optional numbers."""
    (qids, texts, _tags, unanswerable, statuses, _gold, _stale, _values, ranks, tops, latencies,
     answers, judged, errors, _warnings, _ranking) = fields
    if not _strings_within(qids, 200) or min(map(len, qids)) < 1:
        return False
    if not (_strings_within(texts, 10_000) and set(map(type, unanswerable)) == {bool}):
        return False
    if not (_strings_within(statuses, 20) and set(statuses) <= _STATUSES):
        return False
    if not (_kinds_are(tops, int, float, _NONE) and _kinds_are(answers, bool, _NONE, but=())):
        return False
    if not _whole(_present(ranks), 1):
        return False
    if not _kinds_are(latencies, int, float, _NONE) or min(_present(latencies), default=0) < 0:
        return False
    present = _present(judged)
    if not _kinds_are(judged, int, float, _NONE) or (present and not 0 <= min(present) <= max(present) <= 1):
        return False
    return _strings_within(_present(errors), 2000)


def _values_valid(values, metrics: int) -> bool:
    """Each row's metric values: none, or one per metric, each null or within METRIC_RANGE."""
    if not _lists(values) or not set(map(len, values)) <= {0, metrics} or _longest(values) > 200:
        return False
    flat = list(chain.from_iterable(values))
    kinds = set(map(type, flat))
    if not all(issubclass(kind, (int, float, _NONE)) and kind is not bool for kind in kinds):
        return False
    present = _present(flat) if _NONE in kinds else flat
    lo, hi = METRIC_RANGE
    return not present or (lo <= min(present) and max(present) <= hi)


def _finite(rows, fields, scores) -> bool:
    """``row_finite`` of every row: at once when the block's numbers are small enough that no
    row's sum can overflow, else row by row (``rows`` empty: False then). The metric values
    and judged@k are already held to [0, 1] (json gives no NaN), so the scores, top scores
    and latencies decide."""
    numbers = chain(scores, *(_present(fields[FIELD[name]]) for name in ("top_score", "latency_ms")))
    try:
        total = sum(map(abs, numbers))
    except OverflowError:  # an integer past the largest float
        total = math.inf
    if total < _SAFE_TOTAL:  # False for NaN too
        return True
    return bool(rows) and all(map(row_finite, rows))


def checked_block(rows: list, metrics: int) -> RowBlock | None:
    """``rows`` (one ``json.loads``) cut into fields when every row is valid by the schema's
    question row and means what ``check_row`` asks, with no number overflowed; None when a
    row is not, or when a value is of a subclass of json's types. ``metrics``: how many
    metric names the artefact has."""
    if not rows or not _lists(rows) or set(map(len, rows)) != {len(QUESTION_FIELDS)}:
        return None
    fields = list(zip(*rows))
    gold = _fields_valid(fields, metrics)
    if gold is None:
        return None
    ranking = _pairs(fields[FIELD["ranking"]], 10_000, True)
    if ranking is None or not set(map(type, ranking[2])) <= {int, float} or not _finite(rows, fields, ranking[2]):
        return None
    return RowBlock(fields, ranking[0], ranking[1], gold)


def _fields_valid(fields, metrics: int):
    """Every field but the ranking valid over the block: the gold pairs (``_pairs``), or None."""
    if not (_scalars_valid(fields) and _values_valid(fields[FIELD["metrics"]], metrics)):
        return None
    if not (_lists_of_strings(fields[FIELD["tags"]], 50, 100) and _lists_of_strings(fields[FIELD["stale"]], 1000, 1000)
            and _lists_of_strings(fields[FIELD["warnings"]], 50, 2000)):
        return None
    gold = _pairs(fields[FIELD["gold"]], 1000, False)
    return gold if gold is not None and _whole(gold[2], -1000, 1000) else None


def row_acceptable(row, metrics: int):
    """The per-row verdict: the ranking's chunk ids of a row valid by the schema, with no
    number overflowed to inf and nothing ``check_row`` would say; None otherwise."""
    from ci_eval.core.artefact.artefact_checks import row_means
    from ci_eval.core.artefact.artefact_rows import question_row_v2_valid

    if not question_row_v2_valid(row):
        return None
    values, ranking = row[FIELD["metrics"]], row[FIELD["ranking"]]
    ids = next(zip(*ranking)) if ranking else ()
    if not row_means(values, [cid for cid, _ in row[FIELD["gold"]]], ids, metrics):
        return None
    return ids if row_finite(row) else None


def row_finite(row: list) -> bool:
    """Whether no number of a valid row overflowed to inf: then their sum is finite (a sum
    that overflows, or an integer too large for a float, only sends the row to the full
    parse, which decides)."""
    values = row[FIELD["metrics"]]
    try:
        total = sum(score for _, score in row[FIELD["ranking"]])
        total += sum(values) if None not in values else sum(v for v in values if v is not None)
        for extra in (row[FIELD["top_score"]], row[FIELD["latency_ms"]], row[FIELD["judged_at_k"]]):
            if extra is not None:
                total += extra
        return math.isfinite(total)  # an all-integer sum past a double overflows here
    except OverflowError:
        return False
