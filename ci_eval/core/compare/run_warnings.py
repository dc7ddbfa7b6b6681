"""What was wrong with head's run but survivable, summarised for the comment: each kind of
warning with the questions it touched, so a retriever that quietly returns too little
(or duplicates, or nothing) is seen on the PR, not only in the JSON."""

from __future__ import annotations

from dataclasses import dataclass

from ci_eval.core.artefact.artefact import RunHeader
from ci_eval.core.artefact.question_columns import Questions
from ci_eval.core.artefact.repeat import repeat_line

# Recorded warnings, recognised by what they say (core/artefact/results.py and the run-file reader
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


def _flagged(columns, depth: int | None) -> list[tuple[str, list[int]]]:
    """The positions of the questions each count of results and stale gold flags (not a
    failed question: the gate's errors rule counts those), by masks over the columns."""
    import numpy as np

    names = columns.status_names
    failed = (np.frombuffer(columns.status, dtype=np.uint8) == names.index("error")
              if "error" in names else np.zeros(len(columns), dtype=bool))
    returned = np.frombuffer(columns.returned, dtype=np.uint32)
    out = [("no result at all", np.flatnonzero(~failed & (returned == 0)).tolist())]
    if depth is not None:
        fewer = ~failed & (returned > 0) & (returned < depth)
        out.append((f"fewer results than the depth ({depth}) asked for", np.flatnonzero(fewer).tolist()))
    stale = [i for i in columns.stale if not failed[i]]
    return out + [("stale gold ids (missing from the index)", stale)]


def run_warnings(head: Questions, info: RunHeader,
                 no_comparison: str | None) -> tuple[RunWarning, ...]:
    """Read from head's columns: what each question recorded, how many results it
    returned, its stale gold."""
    groups: dict[str, set[str]] = {}
    columns = head.columns
    for i, warnings in columns.warnings.items():
        for w in warnings:
            groups.setdefault(_label(w), set()).add(columns.ids[i])
    for label, positions in _flagged(columns, info.depth):
        if positions:
            groups.setdefault(label, set()).update(map(columns.ids.__getitem__, positions))
    out = [RunWarning(label, tuple(sorted(ids))) for label, ids in groups.items()]
    if info.repeat is not None and not info.repeat.deterministic:
        out.append(RunWarning(repeat_line(info.repeat).lower(), tuple(sorted(info.repeat.flapping_ids))))
    if no_comparison:
        out.append(RunWarning("no comparison possible (the verdict says why)", ()))
    return tuple(sorted(out, key=lambda w: (-len(w.ids), w.label)))
