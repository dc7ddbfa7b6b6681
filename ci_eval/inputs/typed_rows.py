"""A piece of version 2 question rows decoded straight into the schema's types and bounds, then
held to what no type can say: the artefact reader's fast path (inputs/artefact_file.py).

msgspec decodes the piece's bytes into one tuple a row, each field of the type and bounds
artefact-v2.schema.json gives it (``ROW_TYPES``, in the order of QUESTION_FIELDS), and refuses
whatever the schema refuses there: a wrong type, a length or a value out of bounds, a row of
another length. It also refuses what the full parse refuses that is no type: invalid JSON or
UTF-8, NaN and Infinity, a number that overflows a float, an integer too long to convert, a
lone surrogate. Then ``decoded_block`` asks what ``check_row`` would: one metric value per
metric name (or none), and no chunk id named twice in one row's gold or ranking list (a dict
of the list's pairs is shorter than the list); the metric range is a bound of the type.

The verdict is the per-row one (artefact_rows.question_row_v2_valid, artefact_checks.row_means,
no number overflowed) with two differences, both on inputs ci-eval never writes, and both
safe: an integer field written as a whole float (a grade or first gold rank of ``2.0``) is
refused here, and so read by the full parse, which accepts it with the same meaning; a row
whose numbers are each finite but whose sum overflows is accepted here, as the full parse
accepts it (the per-row check sums the numbers to find one that overflowed, and refused it).
A refusal is never the reader's: None sends the file to the full parse, which words it.

Measured (``benchmarks/bench_json_libs.py --scale 100000 --before 014dc10 --compare-only``, a
shared two-core machine): against json's parse followed by the field-by-field block check it
replaced, `ci-eval compare` at 100,000 questions took 0.65x the wall time and 0.65x the CPU.
"""

from __future__ import annotations

from itertools import chain
from typing import Annotated, Literal

import msgspec

from ci_eval.core.artefact.artefact_checks import METRIC_RANGE
from ci_eval.core.artefact.question_row import FIELD
from ci_eval.core.artefact.row_blocks import RowBlock
from ci_eval.core.limits import (
    MAX_ID_BYTES,
    MAX_JUDGED,
    MAX_QUESTION_CHARS,
    MAX_QUESTION_ID_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS_PER_QUESTION,
)


def _text(max_length: int, min_length: int = 0):
    return Annotated[str, msgspec.Meta(min_length=min_length, max_length=max_length)]


def _list(item, max_items: int):
    return Annotated[list[item], msgspec.Meta(max_length=max_items)]


_CHUNK_ID = _text(MAX_ID_BYTES)
_METRIC_VALUE = Annotated[float, msgspec.Meta(ge=METRIC_RANGE[0], le=METRIC_RANGE[1])]  # check_row's range
_SHARE = Annotated[float, msgspec.Meta(ge=0, le=1)]
_GRADE = Annotated[int, msgspec.Meta(ge=-1000, le=1000)]

# The question row of artefact-v2.schema.json ($defs.question), field by field. A JSON integer
# is a float where a number is asked (as json's value would be read); a float is never an int.
ROW_TYPES = {
    "id": _text(MAX_QUESTION_ID_CHARS, min_length=1),
    "question": _text(MAX_QUESTION_CHARS),
    "tags": _list(_text(MAX_TAG_CHARS), MAX_TAGS_PER_QUESTION),
    "unanswerable": bool,
    "status": Literal["ok", "stale", "unanswerable", "error"],
    "gold": _list(tuple[_CHUNK_ID, _GRADE], MAX_JUDGED),
    "stale": _list(_CHUNK_ID, MAX_JUDGED),
    "metrics": _list(_METRIC_VALUE | None, 200),
    "first_gold_rank": Annotated[int, msgspec.Meta(ge=1)] | None,  # no upper bound: any size, exact
    "top_score": float | None,
    "latency_ms": Annotated[float, msgspec.Meta(ge=0)] | None,
    "answer_correct": bool | None,
    "judged_at_k": _SHARE | None,
    "error": _text(2000) | None,
    "warnings": _list(_text(2000), 50),
    "ranking": _list(tuple[_CHUNK_ID, float], 10_000),
}

_ROWS = msgspec.json.Decoder(list[tuple[tuple(ROW_TYPES.values())]])
_METRICS, _GOLD, _RANKING = FIELD["metrics"], FIELD["gold"], FIELD["ranking"]


def decoded_rows(body: bytes) -> list[tuple] | None:
    """The rows of ``body`` (whole rows, comma-separated, without the list's brackets), each a
    tuple of ROW_TYPES' types; None when one is not, or when there is no row."""
    try:
        return _ROWS.decode(b"[" + body + b"]") or None
    except msgspec.DecodeError:  # ValidationError is one too
        return None


def decoded_block(body: bytes, metrics: int) -> RowBlock | None:
    """The rows of ``body`` cut into fields when every one is valid by the schema's question
    row and means what ``check_row`` asks (``metrics``: how many metric names the artefact
    has); None otherwise."""
    rows = decoded_rows(body)
    if rows is None:
        return None
    fields = list(zip(*rows))
    if not set(map(len, fields[_METRICS])) <= {0, metrics}:
        return None
    gold, ranking = _unique_pairs(fields[_GOLD]), _unique_pairs(fields[_RANKING])
    if gold is None or ranking is None:
        return None
    return RowBlock(fields, ranking[0], ranking[1], gold)


def _unique_pairs(lists):
    """Each list of (chunk id, value) pairs as a dict, its ids and values as flat runs over all
    the lists; None when a list names a chunk twice."""
    dicts = list(map(dict, lists))
    if sum(map(len, dicts)) != sum(map(len, lists)):
        return None
    return dicts, list(chain.from_iterable(dicts)), list(chain.from_iterable(map(dict.values, dicts)))
