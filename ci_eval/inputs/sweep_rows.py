"""A folder of sweep row artefacts (`ci-eval sweep --row N --out`, each possibly merged
from shards by `ci-eval merge`) -> the rows, in the sweep's order."""

from __future__ import annotations

from pathlib import Path

from ci_eval.errors import InputError


def _row_note(artefact) -> dict:
    note = artefact.config.get("sweep") if isinstance(artefact.config, dict) else None
    return note if isinstance(note, dict) else {}


def read_rows(folder: str) -> list[tuple[str, object]]:
    """``[(label, Artefact)]`` for every ``*.json`` in ``folder``: ordered by the row number
    the sweep recorded (files without one after, by name), labelled by the recorded label or
    else the file name. Two files of one row are refused: a shard not merged, or a copy."""
    from ci_eval.inputs.artefact_file import read_run

    root = Path(folder)
    if not root.is_dir():
        raise InputError("is not a folder of row artefacts", folder, "--from")
    paths = sorted(p for p in root.glob("*.json") if p.is_file())
    if not paths:
        raise InputError("holds no row artefact (*.json)", folder, "--from")
    found, where = [], {}
    for path in paths:
        artefact = read_run(path)
        note = _row_note(artefact)
        number = note.get("row")
        if isinstance(number, int) and not isinstance(number, bool):
            if number in where:
                raise InputError(f"row {number} is in two files, {where[number].name} and {path.name} "
                                 "(merge a row's shards with `ci-eval merge` first)", folder, "--from")
            where[number] = path
        label = note.get("label") if isinstance(note.get("label"), str) else path.stem
        key = (0, number, "") if number in where and where[number] == path else (1, 0, path.name)
        found.append((key, label, artefact))
    found.sort(key=lambda item: item[0])
    return [(label, artefact) for _, label, artefact in found]
