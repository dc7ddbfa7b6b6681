"""A version 2 artefact read as the version 1 object the reader takes (interim).

Until the reader takes version 2 rows itself, a version 2 artefact is turned into the
version 1 object holding the same facts (question_row.from_row) and checked as one. A
document whose rows are not even row-shaped is checked against the version 2 schema
instead, so its errors name version 2 places.
"""

from __future__ import annotations

from ci_eval.core.question_row import QUESTION_FIELDS, from_row
from ci_eval.errors import InputErrors

_PAIRS = (5, 15)  # gold and ranking: lists of [id, value] pairs


def _row_shaped(row) -> bool:
    if not isinstance(row, list) or len(row) != len(QUESTION_FIELDS):
        return False
    return all(isinstance(row[i], list) and all(isinstance(p, list) and len(p) == 2 for p in row[i])
               for i in _PAIRS) and isinstance(row[7], list)


def as_version_1(data: dict, source: str) -> dict:
    """``data`` (schema_version 2) as a version 1 artefact object; InputErrors when its
    layout is not version 2's."""
    from ci_eval.core.validate import schema_problems
    from ci_eval.schemas import load

    rows, metrics = data.get("questions"), data.get("metrics")
    if (data.get("question_fields") != list(QUESTION_FIELDS) or not isinstance(rows, list)
            or not isinstance(metrics, list) or not all(_row_shaped(r) for r in rows)):
        problems = schema_problems(data, load("artefact-v2"), source)
        if problems:
            raise InputErrors(problems[:20])
    out = {key: value for key, value in data.items() if key not in ("question_fields", "questions")}
    out["schema_version"] = 1
    out["questions"] = [from_row(row, metrics) for row in rows]
    return out
