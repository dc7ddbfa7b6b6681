"""Run artefacts as the tests read them: a written (version 2) artefact's rows turned into
the version 1 objects holding the same facts (question_row.from_row), so a test can say
``q["status"]`` whichever version wrote the file."""

from __future__ import annotations

import json
from pathlib import Path

from ci_eval.core.artefact.question_row import QUESTION_FIELDS, from_row


def as_objects(data: dict) -> dict:
    """A parsed artefact with each question as an object (a version 1 artefact as it is)."""
    if data.get("schema_version") != 2:
        return data
    assert data["question_fields"] == list(QUESTION_FIELDS)
    out = {k: v for k, v in data.items() if k != "question_fields"}
    out["schema_version"] = 1  # what it now is: edited and written back, still readable
    out["questions"] = [from_row(row, data["metrics"]) for row in data["questions"]]
    return out


def read_run(path) -> dict:
    return as_objects(json.loads(Path(path).read_text(encoding="utf-8")))


def demo_base(folder) -> dict:
    """The demo's baseline run as a stored one reads, written to ``folder``, each question
    an object: a version 1 artefact, so without the keys only version 2 has (the demo's
    ``stages``)."""
    from ci_eval.demo.run import demo_artefact

    path = Path(folder) / "base.json"
    demo_artefact("base", path, show_progress=False)
    return {k: v for k, v in read_run(path).items() if k not in ("stages", "calls", "repeat")}
