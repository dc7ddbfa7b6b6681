"""What was wrong with head's run but survivable, summarised for the comment: each kind of
warning with the questions it touched, so a retriever that quietly returns too little
(or duplicates, or nothing) is seen on the PR, not only in the JSON."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.artefact import RunHeader
from ci_eval.core.question_columns import Questions

# Recorded warnings, recognised by what they say (core/results.py and the run-file reader
# write them); anything else is listed under its own first words.
_RECORDED = (("duplicate id", "duplicate ids dropped (first occurrence kept)"),
             ("not in the run file", "gold questions missing from the run file"),
             ("not in the index", "returned ids not in the index"))


@dataclass(frozen=True)
class RunWarning:
    label: str
    ids: tuple[str, ...]  # the questions it touched, sorted


def _label(text: str) -> str:
    for needle, label in _RECORDED:
        if needle in text:
            return label
    return text.split(",")[0][:80]


def run_warnings(head: Questions, info: RunHeader,
                 no_comparison: str | None) -> tuple[RunWarning, ...]:
    """Read from head's columns: what each question recorded, how many results it
    returned, its stale gold."""
    groups: dict[str, set[str]] = {}

    def add(label: str, qid: str) -> None:
        groups.setdefault(label, set()).add(qid)

    columns = head.columns
    for i, warnings in columns.warnings.items():
        for w in warnings:
            add(_label(w), columns.ids[i])
    error = columns.status_names.index("error") if "error" in columns.status_names else -1
    for i, (qid, code, returned) in enumerate(zip(columns.ids, columns.status, columns.returned)):
        if code == error:
            continue  # counted by the gate's errors rule
        if returned == 0:
            add("no result at all", qid)
        elif info.depth is not None and returned < info.depth:
            add(f"fewer results than the depth ({info.depth}) asked for", qid)
        if i in columns.stale:
            add("stale gold ids (missing from the index)", qid)
    out = [RunWarning(label, tuple(sorted(ids))) for label, ids in groups.items()]
    if no_comparison:
        out.append(RunWarning("no comparison possible (the verdict says why)", ()))
    return tuple(sorted(out, key=lambda w: (-len(w.ids), w.label)))
