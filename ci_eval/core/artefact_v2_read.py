"""A checked version 2 artefact handed on as the version 1 object (interim).

merge, the action and the demo still take the artefact as a dict of version 1 objects; a
version 2 artefact, once checked as version 2 (inputs/loaders), is turned into the version 1
object holding the same facts (question_row.from_row). Those callers should move to the typed
reader, and this module then goes.
"""

from __future__ import annotations

from ci_eval.core.question_row import from_row


def as_version_1(data: dict) -> dict:
    """``data`` (a checked schema_version 2 artefact) as a version 1 artefact object."""
    out = {key: value for key, value in data.items() if key not in ("question_fields", "questions")}
    out["schema_version"] = 1
    out["questions"] = [from_row(row, data["metrics"]) for row in data["questions"]]
    return out
