"""Version 2 artefact files as the writer lays them out, for tests that read real files."""

from __future__ import annotations

from factories import artefact, as_v2

from ci_eval.core.artefact_writer import END_KEYS, artefact_pieces


def write_v2(path, specs: list[dict], **kw) -> None:
    """The artefact of ``specs`` (factories.artefact's keywords in ``kw``) written by the
    writer's own pieces (core/artefact_writer.py)."""
    data = as_v2(artefact(specs, **kw))
    head = {k: v for k, v in data.items() if k not in END_KEYS | {"questions", "question_fields"}}
    end = {k: v for k, v in data.items() if k in END_KEYS}
    path.write_text("".join(artefact_pieces(head, data["questions"], lambda: end)), encoding="utf-8")


def out_of_range(path) -> int:
    """Make the first metric value of each row whose stale list is empty and whose first two
    values are 1 out of range (2.5): several problems in one file. How many rows it changed."""
    with open(path, "rb") as f:
        bad = f.read().replace(b"[],[1,1,", b"[],[2.5,1,")
    with open(path, "wb") as f:
        f.write(bad)
    return bad.count(b"[2.5,")
