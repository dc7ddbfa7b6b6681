"""A folder of run artefacts read into a ``History`` (core/compare/history.py), a run at a time.

Each artefact is checked as the untrusted input it is (inputs/artefact_stream.read_part: the
schema, the meaning, every row) and its rows are then read again a line at a time into the
history's few numbers per question, so only one artefact's question ids are held at once,
never its rows. The runs are put in the order they were made (``created_at``, then the file
name), which only the artefact knows: a first look reads each file's keys before its rows.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ci_eval.core.artefact.question_row import history_facts
from ci_eval.core.artefact.run_failure import head_failure
from ci_eval.core.compare.history import History, HistoryBuilder, RunMark, config_key
from ci_eval.errors import InputError

_ROWS_LINE = b' "questions": [\n'
_SNIFF_LIMIT = 64 * 1024 * 1024  # the keys before the rows are small; past this it is not an artefact's head


def artefact_paths(folder: str | os.PathLike) -> list[Path]:
    """The ``*.json`` files directly in ``folder`` (a run artefact each)."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError("is not a folder of run artefacts", str(folder))
    paths = sorted(p for p in root.iterdir() if p.suffix == ".json" and not p.name.startswith(".") and p.is_file())
    if not paths:
        raise InputError("holds no run artefacts (*.json)", str(folder))
    return paths


def _view(head) -> tuple:
    """What the history takes from a run's keys: ordering, naming, config, metrics."""
    return (head.created_at or "", head.sha, config_key(head.config, head.index_version),
            tuple(head.metrics), head.k)


def _sniffed(path: Path):
    """The keys before the rows, read without the rows, for ordering and naming (checked
    again when the file is read in full); None when the file is not in the writer's layout
    or its head is not what an artefact's is."""
    from ci_eval.core.artefact.run_head import read_run_head

    head, size = [], 0
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line == _ROWS_LINE:
                    data = json.loads(b"".join(head).rstrip().removesuffix(b",") + b"\n}")
                    return _view(read_run_head(data))
                size += len(line)
                if size > _SNIFF_LIMIT:
                    return None
                head.append(line)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # read_part words what is wrong with it
    return None


def read_history(folder: str | os.PathLike, last: int | None = None, progress=None) -> History:
    """The history of the artefacts in ``folder``, oldest first; ``last``: only the most
    recent so many. ``progress(done, total, path)`` is told after each run is read."""
    from ci_eval.inputs.artefact_out import written_rows
    from ci_eval.inputs.artefact_stream import read_part

    views = []
    for path in artefact_paths(folder):
        view = _sniffed(path)
        views.append((path, view if view is not None else _view(read_part(path).head)))
    views.sort(key=lambda pv: (pv[1][0], pv[0].name))
    if last is not None:
        views = views[-last:]
    runs = [RunMark(path.name, sha, created or None, key) for path, (created, sha, key, _, _) in views]
    builder = HistoryBuilder(runs, views[-1][1][3], int(views[-1][1][4]))
    for r, (path, view) in enumerate(views):
        part = read_part(path)  # every check, the ids of this one run held
        if _view(part.head) != view:
            raise InputError("changed while it was read", str(path))
        failure = head_failure(part.head)
        if failure:
            # A failed run's questions were not answered, not missed: none of its rows is a
            # state (the same definition of a failed run as the gate's, core/artefact/run_failure.py).
            print(f"ci-eval: history: warning: {path.name}: its run failed, so its rows are left out: {failure}",
                  file=sys.stderr, flush=True)
        else:
            metrics = part.head.metrics
            builder.reserve(len(part.ids))
            for row in written_rows(path, part.ids, metrics):
                builder.add(r, *history_facts(row, metrics))
        del part
        if progress is not None:
            progress(r + 1, len(views), path)
    return builder.build()


def stderr_progress(done: int, total: int, path: Path) -> None:
    """Long reads show they are moving: a line per run on stderr."""
    print(f"ci-eval: history: read run {done}/{total} ({path.name})", file=sys.stderr, flush=True)


def history_outputs(folder, fmt: str, *, last: int | None = None, svg_out=None, trend_svg_out=None,
                    rows: int = 40, quiet: bool = False):
    """Read the history, write the pictures asked for, and give the printed report a piece
    at a time (a CSV of 3,000,000 lines is not built whole). Everything is read and
    checked before the first file is written."""
    import csv
    import io

    from ci_eval.core.compare.history import csv_rows
    from ci_eval.core.report.history_svg import heat_map, trend_lines
    from ci_eval.core.report.render_history import headline, json_pieces, render_markdown
    from ci_eval.inputs.files import atomic_write

    history = read_history(folder, last, None if quiet else stderr_progress)
    lines = history.lines()
    trends = history.trends()
    if svg_out:
        atomic_write(svg_out, heat_map(history, lines, rows))
    if trend_svg_out:
        atomic_write(trend_svg_out, trend_lines(history, trends, headline(history)[0]))
    if fmt == "markdown":
        yield render_markdown(history, lines, trends)
    elif fmt == "json":
        yield from json_pieces(history, lines, trends)
    else:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        for row in csv_rows(history):
            writer.writerow(row)
            if buffer.tell() > 1 << 16:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()
