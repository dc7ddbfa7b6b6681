"""A folder of run artefacts read into a ``History`` (core/compare/history.py), a run at a time.

Each artefact in the writer's layout is read by inputs/history_file.read_run_rows: its head
checked as ``ci-eval compare`` checks it, of each row only the fields the history uses,
decoded and checked by msgspec a piece of rows at a time and made into arrays; the other
fields of a row (its ranking among them) are passed over, so an artefact broken only there
is read (history_file.py says what is and is not checked). The history takes a run's
columns at once; one run's columns are held while it is read, never its rankings. A file
not in the writer's layout, or one that reader does not take, is checked in full by
inputs/artefact_stream.read_part, which words any refusal, and read again a row at a time.
Measured with ``python benchmarks/bench_history.py --before REV`` (docs/benchmarks.md). The
runs are put in the order they were made (``created_at``, then the file name), which only
the artefact knows: a first look reads each file's keys before its rows.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ci_eval.core.artefact.question_row import history_facts
from ci_eval.core.artefact.run_failure import head_failure
from ci_eval.core.compare.history import History, HistoryBuilder, RunMark, config_key, project_key, project_of
from ci_eval.errors import InputError, NotARunArtefact

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
    """What the history takes from a run's keys: ordering, naming, config, metrics, project."""
    return (head.created_at or "", head.sha, config_key(head.config, head.index_version),
            tuple(head.metrics), head.k, project_key(head.gold_set, head.config))


def _sniffed(path: Path):
    """The keys before the rows, read without the rows, for ordering and naming (checked
    again when the file is read in full); None when the file is not in the writer's layout
    or its head is not what an artefact's is."""
    from ci_eval.core.artefact.run_head import read_run_head
    from ci_eval.core.limits import MAX_ARTEFACT_BYTES

    head, size = [], 0
    try:
        with open(path, "rb") as fh:
            # Sized before a byte is read: a 1 GB file of one line was read whole (2.1 GB of
            # memory) before any limit applied. Past the artefact's limit read_part refuses
            # it by its size, as compare does; under it no line is read past the head's bound.
            if os.fstat(fh.fileno()).st_size > MAX_ARTEFACT_BYTES:
                return None
            for line in iter(lambda: fh.readline(_SNIFF_LIMIT + 1), b""):
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


@dataclass(frozen=True)
class RunFiles:
    """Where a history's artefacts are: a folder, how warnings name each file (a fetched
    run is "run 123", not its temporary file), and whether a broken artefact is skipped with
    a warning (fetched runs, as a broken baseline is) or stops the command (a folder the user
    made: exit 2, naming the file)."""

    folder: Path
    names: dict = field(default_factory=dict)  # file name -> its name in messages
    skip_broken: bool = False

    def name(self, path: Path) -> str:
        return self.names.get(path.name, str(path))


def _skip(warn, name: str, why: str | InputError) -> None:
    if isinstance(why, InputError):  # the file is named once, by the warning itself
        why = f"{why.place}: {why.message}" if why.place else why.message
    warn(f"ci-eval: warning: history: skipping {name}: {why}")


def _project_runs(files: RunFiles, views: list, warn) -> list:
    """The views of the runs of the folder's project (``project_of``); the others skipped
    with one line each naming the file and both projects."""
    project = project_of([view[5] for _, view in views])
    kept = []
    for path, view in views:
        if view[5] == project:
            kept.append((path, view))
        else:
            _skip(warn, files.name(path), f"another project's run: its gold set is {_shown(view[5])}, "
                  f"the other runs' {_shown(project)}")
    return kept


def _shown(key: tuple[str, str]) -> str:
    path, marker = key
    return repr(path[:80] or "(not recorded)") + (f" with marker {marker[:40]!r}" if marker else "")


def _run_rows(path: Path):
    """(header, the history's columns) of the artefact at ``path`` in the writer's layout,
    read by inputs/history_file.read_run_rows; None for any other file, or one it does not
    take, which ``_checked`` then reads in full and words."""
    from ci_eval.inputs.history_file import read_run_rows

    try:
        return read_run_rows(path)
    except InputError:
        return None


def _checked(files: RunFiles, path: Path, warn):
    """The run at ``path`` checked in full (inputs/artefact_stream.read_part), or None when
    it is skipped: not a run artefact, or broken where ``skip_broken``."""
    from ci_eval.inputs.artefact_stream import read_part

    try:
        return read_part(path, source=files.name(path))
    except NotARunArtefact:
        _skip(warn, files.name(path), "not a run artefact")
    except InputError as exc:
        if not files.skip_broken:
            raise
        _skip(warn, files.name(path), exc)
    return None


def read_history(source, last: int | None = None, progress=None, warn=None) -> History:
    """The history of the artefacts in ``source`` (a folder, or RunFiles), oldest first;
    ``last``: only the most recent so many. ``progress(done, total, path)`` is told after
    each run is read, ``warn(line)`` each file skipped: one that is not a run artefact, a
    run of another project (its gold set file or marker, or no question shared with the
    others), and with ``skip_broken`` one that any check refuses."""
    from ci_eval.core.artefact.run_head import read_run_head
    from ci_eval.inputs.artefact_out import written_rows

    files = source if isinstance(source, RunFiles) else RunFiles(Path(source))
    warn = warn or stderr_warning
    views = []
    for path in artefact_paths(files.folder):
        view = _sniffed(path)
        if view is None:
            part = _checked(files, path, warn)
            if part is None:
                continue
            view = _view(part.head)
        views.append((path, view))
    if not views:
        raise InputError("holds no run artefacts (*.json)", str(files.folder))
    views.sort(key=lambda pv: (pv[1][0], pv[0].name))
    views = _project_runs(files, views, warn)
    if last is not None:
        views = views[-last:]
    runs = [RunMark(path.name, view[1], view[0] or None, view[2]) for path, view in views]
    builder = HistoryBuilder(runs, views[-1][1][3], int(views[-1][1][4]))
    dropped = []
    for r, (path, view) in enumerate(views):
        read = _run_rows(path)  # this one run's columns held
        part = None if read is not None else _checked(files, path, warn)
        if read is None and part is None:
            dropped.append(r)
            continue
        head = read_run_head(read[0]) if read is not None else part.head
        if _view(head) != view:
            raise InputError("changed while it was read", files.name(path))
        failure = head_failure(head)
        if failure:
            # A failed run's questions were not answered, not missed: none of its rows is a
            # state (the same definition of a failed run as the gate's, core/artefact/run_failure.py).
            warn(f"ci-eval: warning: history: {files.name(path)}: its run failed, so its rows are left out: {failure}")
        elif read is not None:
            builder.add_run(r, read[1])
        else:
            metrics = part.head.metrics
            builder.reserve(len(part.ids))
            for row in written_rows(path, part.ids, metrics):
                builder.add(r, *history_facts(row, metrics))
        del part, read
        if progress is not None:
            progress(r + 1, len(views), path)
    for r in builder.unlinked():
        if r not in dropped:
            _skip(warn, files.name(views[r][0]), "another project's run: it shares no question with the other runs")
            dropped.append(r)
    if len(dropped) == len(views):
        raise InputError("holds no usable run artefact (each was skipped, see above)", str(files.folder))
    return builder.build(sorted(dropped))


def stderr_warning(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def stderr_progress(done: int, total: int, path: Path) -> None:
    """Long reads show they are moving: a line per run on stderr."""
    print(f"ci-eval: history: read run {done}/{total} ({path.name})", file=sys.stderr, flush=True)


def history_outputs(source, fmt: str, *, last: int | None = None, svg_out=None, trend_svg_out=None,
                    rows: int = 40, quiet: bool = False):
    """Read the history, write the pictures asked for, and give the printed report a piece
    at a time (a CSV of 3,000,000 lines is not built whole). Everything is read and
    checked before the first file is written."""
    from ci_eval.core.compare.history import csv_pieces
    from ci_eval.core.report.history_svg import heat_map, trend_lines
    from ci_eval.core.report.render_history import headline, json_pieces, render_markdown
    from ci_eval.inputs.files import atomic_write

    history = read_history(source, last, None if quiet else stderr_progress)
    if fmt == "csv" and not svg_out and not trend_svg_out:
        yield from csv_pieces(history)  # neither the lines nor the trends are in it
        return
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
        yield from csv_pieces(history)
