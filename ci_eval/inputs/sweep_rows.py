"""A folder of sweep row artefacts (`ci-eval sweep --row N --out`, each possibly merged
from shards by `ci-eval merge`) -> the rows, in the sweep's order."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

from ci_eval.errors import InputError


def _row_note(artefact) -> dict:
    note = artefact.config.get("sweep") if isinstance(artefact.config, dict) else None
    return note if isinstance(note, dict) else {}


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _names(paths) -> str:
    names = [p.name for p in paths]
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _one_sweep(numbered: dict, folder: str) -> None:
    """The numbered rows (row number -> (path, the sweep's recorded row count or None)) are
    every row of one sweep: rows an earlier, longer sweep left in the folder are refused,
    not tabulated beside these, and a missing row is named by its number (a matrix job that
    failed uploads nothing), never closed up by renumbering the rows after it."""
    sweeps: dict = {}
    for _, (path, rows) in sorted(numbered.items()):
        sweeps.setdefault(rows, []).append(path)
    if len(sweeps) > 1:
        said = "; ".join(f"{_names(paths)} of " + (f"a {rows}-row sweep" if rows else "a sweep that did not record its size")
                         for rows, paths in sorted(sweeps.items(), key=lambda kv: kv[0] or 0))
        raise InputError(f"holds the rows of more than one sweep ({said}): tabulate one sweep's rows, "
                         "removing the others' files", folder, "--from")
    (rows,) = sweeps
    count = rows if rows else max(numbered)
    beyond = [n for n in numbered if n > count]
    if beyond:
        raise InputError(f"row {beyond[0]} ({numbered[beyond[0]][0].name}) is past the sweep's {count} rows",
                         folder, "--from")
    absent = count - len(numbered)  # every row is at most count: this many are missing
    if absent:
        # the first few by number, found in at most len(numbered) + 10 steps whatever the
        # count a file claims
        missing = list(islice((n for n in range(1, count + 1) if n not in numbered), 10))
        which = (f"row {missing[0]}" if absent == 1 else "rows " + ", ".join(map(str, missing))
                 + (f" and {absent - len(missing):,} more" if absent > len(missing) else ""))
        raise InputError(f"{which} of the {count:,}-row sweep {'is' if absent == 1 else 'are'} missing "
                         f"(a row whose job failed uploads nothing): run {'it' if absent == 1 else 'them'} "
                         "again, or tabulate a folder of every row", folder, "--from")


def read_rows(folder: str) -> list[tuple[str, object]]:
    """``[(label, Artefact)]`` for every ``*.json`` in ``folder``: ordered by the row number
    the sweep recorded (files without one after, by name), labelled by the recorded label or
    else the file name. Two files of one row are refused: a shard not merged, or a copy; so
    are a missing row and rows of another sweep (``_one_sweep``)."""
    from ci_eval.inputs.artefact_file import read_run

    root = Path(folder)
    if not root.is_dir():
        raise InputError("is not a folder of row artefacts", folder, "--from")
    paths = sorted(p for p in root.glob("*.json") if p.is_file())
    if not paths:
        raise InputError("holds no row artefact (*.json)", folder, "--from")
    found, numbered = [], {}
    for path in paths:
        artefact = read_run(path)
        note = _row_note(artefact)
        number = note.get("row")
        if _whole(number):
            if number in numbered:
                raise InputError(f"row {number} is in two files, {numbered[number][0].name} and {path.name} "
                                 "(merge a row's shards with `ci-eval merge` first)", folder, "--from")
            # a sweep before ci-eval recorded its row count: None, its rows still checked for gaps
            numbered[number] = (path, note["rows"] if _whole(note.get("rows")) else None)
        label = note.get("label") if isinstance(note.get("label"), str) else path.stem
        key = (0, number, "") if _whole(number) else (1, 0, path.name)
        found.append((key, label, artefact))
    if numbered:
        _one_sweep(numbered, folder)
    found.sort(key=lambda item: item[0])
    return [(label, artefact) for _, label, artefact in found]
