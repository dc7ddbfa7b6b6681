"""Running a sweep's rows: each row is one `ci-eval run` of its configuration, streamed to
its own artefact, through the retrieval cache."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RowRun:
    number: int
    label: str
    path: str
    failed: int  # questions the retriever failed on
    cache: tuple[int, int] | None  # (answered from the cache, asked)
    notes: tuple[str, ...] = ()  # the run's warnings and its first error, as `run` prints them


def row_file(folder, number: int) -> Path:
    return Path(folder) / f"row-{number:02d}.json"


def checked_rows(planned) -> list:
    """Every row's inputs (gold set, manifest, answers), loaded and checked before any
    retriever runs, every problem of every row at once: a sweep with one bad row writes
    nothing."""
    from ci_eval.retrieval.pipeline import load_inputs

    return every_or_all_problems(load_inputs, [row.config for row in planned])


def every_or_all_problems(load, items) -> list:
    """``[load(item) for item in items]``, or every problem of every item raised at once."""
    from ci_eval.errors import InputError, InputErrors

    loaded, problems = [], []
    for item in items:
        try:
            loaded.append(load(item))
        except InputErrors as exc:
            problems += exc.problems
        except InputError as exc:
            problems.append(exc)
    if problems:
        # rows share their gold set and often their manifest: a problem of a shared file once
        raise InputErrors(list({str(p): p for p in problems}.values()))
    return loaded


def _cache_folder(inputs, cache_dir: str | None, default: Path) -> str | None:
    """``--cache DIR``, else the row's ``[retriever] cache``, else ``default`` (beside the
    rows) when the index has a version the cache can key on; None: no cache."""
    from ci_eval.retrieval.sharding import _index_version

    if cache_dir or inputs.config.retriever.cache:
        return cache_dir
    return str(default) if _index_version(inputs) else None


def run_row(row, inputs, out, *, cache_dir: str | None, default_cache: Path, shard=None,
            count: int = 1, show_progress: bool = True) -> RowRun:
    """Row ``row`` (a core.compare.sweep_plan.PlannedRow) through the run pipeline into
    ``out``; its number and label are recorded in the artefact's config, so ``sweep --from``
    finds them again."""
    from ci_eval.core.artefact.artefact import note_sweep_row
    from ci_eval.core.artefact.runsummary import error_lines, warning_lines
    from ci_eval.errors import RetrieverError
    from ci_eval.inputs.gitinfo import git_info
    from ci_eval.retrieval.pipeline import run_evaluation

    if show_progress:
        print(f"ci-eval sweep: row {row.number}/{count}: {row.label}", file=sys.stderr)

    def amend(head: dict) -> None:
        note_sweep_row(head, row.number, row.label, count)

    written = run_evaluation(inputs, out, git=git_info(), history=[], show_progress=show_progress,
                             shard=shard, cache_dir=_cache_folder(inputs, cache_dir, default_cache),
                             amend=amend)
    columns = written.columns
    notes = (*warning_lines(columns), *error_lines(columns))
    done = RowRun(row.number, row.label, str(out), columns.errors.count, written.head.cache, tuple(notes))
    for line in notes:  # what `run` would have said, said here too, named by its row
        print(f"ci-eval sweep: row {row.number}: {line}", file=sys.stderr)
    if columns.mostly_outside:
        raise RetrieverError(
            f"row {row.number} ({row.label}): {columns.outside_ids:,} of the {columns.returned_ids:,} ids "
            f"it returned are not in its index ({inputs.config.source}: [index]); the retriever searched "
            f"another index than the row's (does it read the row's [index] params?); see {out}")
    return done


@dataclass(frozen=True)
class SweepRequest:
    """What `ci-eval sweep` was asked, as parsed."""

    configs: tuple[str, ...] = ()
    config: str | None = None
    grid: tuple[str, ...] = ()
    metrics: str | None = None
    folder: str = "ci-eval-sweep"
    row: int | None = None
    shard: str | None = None
    out: str | None = None
    from_dir: str | None = None
    list_only: bool = False
    format: str = "markdown"
    svg: str | None = None
    cache: str | None = None
    quiet: bool = False
    labels: tuple[str, ...] = ()  # --label, one per row


def _usage_problems(req: SweepRequest) -> str | None:
    if req.from_dir and (req.configs or req.grid or req.row is not None):
        return "--from tabulates written rows; it takes no config files, --grid or --row"
    if req.from_dir:
        return None
    if req.configs and (req.grid or req.config):
        return "give config files, or --config and --grid, not both"
    if not req.configs and not req.grid:
        return "give two or more config files, or --config FILE --grid KEY=V1,V2"
    if req.row is not None and not req.out:
        return "--row N needs --out FILE (the row's artefact)"
    if (req.out or req.shard) and req.row is None:
        return "--out and --shard go with --row N (one row of the sweep)"
    return None


def plan(req: SweepRequest) -> tuple:
    """The sweep's rows (core.compare.sweep_plan.PlannedRow), from files or a grid."""
    from ci_eval.core.compare.sweep_plan import PlannedRow, file_labels, grid_rows, parse_grid
    from ci_eval.inputs.loaders import load_config

    if req.grid:
        config = load_config(req.config)
        rows = grid_rows(config, parse_grid(list(req.grid), config))
    else:
        configs = every_or_all_problems(load_config, req.configs)
        # a config's own `label` names its row; else its file's name
        labels = [c.label or name for c, name in zip(configs, file_labels(list(req.configs)))]
        rows = tuple(PlannedRow(i, label, c) for i, (label, c) in enumerate(zip(labels, configs), 1))
    if req.labels:
        from dataclasses import replace

        from ci_eval.errors import InputError

        if len(req.labels) != len(rows):
            raise InputError(f"gives {len(req.labels)} label(s) for {len(rows)} rows: one per row, in order",
                             "--label")
        rows = tuple(replace(row, label=label) for row, label in zip(rows, req.labels))
    return rows


def headline(req: SweepRequest, k: int, spans: bool = False) -> tuple[str, ...]:
    """``--metrics``, else the seeds' columns (recall@k, MRR), with evidence recall and
    precision at k when the gold set has spans (``spans``): the columns that compare
    chunkings."""
    from ci_eval.core.measure.names import resolve_metric
    from ci_eval.errors import InputError

    if not req.metrics:
        evidence = (f"evidence_recall@{k}", f"evidence_precision@{k}") if spans else ()
        return (f"recall@{k}", "mrr", *evidence)
    names = [n.strip() for n in req.metrics.split(",") if n.strip()]
    if not names:
        raise InputError("names no metric", "--metrics")
    try:
        return tuple(dict.fromkeys(resolve_metric(n).name for n in names))
    except InputError as exc:
        raise InputError(exc.message, "--metrics") from None


def sweep(req: SweepRequest) -> int:
    """`ci-eval sweep`: plan the rows, check them all, then run one row (--row), tabulate
    a folder (--from), or run every row and print the table. The exit code back."""
    from ci_eval.errors import EXIT_OK, UsageError

    problem = _usage_problems(req)
    if problem:
        raise UsageError(problem)
    if req.from_dir:
        return _tabulate(req)
    rows = plan(req)
    if req.list_only:
        for row in rows:
            print(f"{row.number}\t{row.label}")
        return EXIT_OK
    if req.row is not None:
        return _one_row(req, rows)
    return _all_rows(req, rows)


def _has_spans(inputs) -> bool:
    return any(q.evidence for q in inputs.gold.questions)


def _measuring(inputs, metrics):
    """``inputs`` whose config also measures the evidence metrics of the table it lacks
    (the columns that compare chunkings, on a span gold set); any other metric stays the
    user's to add to `metrics`."""
    from dataclasses import replace

    missing = [m for m in metrics if m not in inputs.config.metrics and m.startswith("evidence_")
               and _has_spans(inputs)]
    if not missing:
        return inputs
    return replace(inputs, config=replace(inputs.config, metrics=(*inputs.config.metrics, *missing)))


def _check_metrics(metrics, measured, where: str) -> None:
    from ci_eval.errors import InputError

    missing = [m for m in metrics if m not in measured]
    if missing:
        raise InputError(f"does not measure {', '.join(missing)} (it measures {', '.join(measured)}); "
                         "add it to `metrics` or pick others with --metrics", where)


def _one_row(req: SweepRequest, rows) -> int:
    from ci_eval.core.artefact.shard import parse_shard
    from ci_eval.errors import EXIT_OK, EXIT_RETRIEVER_FAILED, InputError
    from ci_eval.inputs.files import check_writable

    if not 1 <= req.row <= len(rows):
        raise InputError(f"there is no row {req.row}: the sweep has rows 1 to {len(rows)}", "--row")
    row = rows[req.row - 1]
    check_writable(req.out)
    shard = parse_shard(req.shard) if req.shard else None
    (inputs,) = checked_rows([row])
    metrics = headline(req, rows[0].config.k, spans=_has_spans(inputs))
    inputs = _measuring(inputs, metrics)
    _check_metrics(metrics, inputs.config.metrics, row.config.source)
    done = run_row(row, inputs, req.out, cache_dir=req.cache, default_cache=Path(req.folder) / "cache",
                   shard=shard, count=len(rows), show_progress=not req.quiet)
    if done.failed:
        _say_failed([done])
        return EXIT_RETRIEVER_FAILED
    if not req.quiet:
        print(f"ci-eval sweep: row {row.number} ({row.label}) written to {req.out}", file=sys.stderr)
    return EXIT_OK


def _say_failed(done) -> None:
    for d in done:
        if d.failed:
            print(f"ci-eval: error: row {d.number} ({d.label}): the retriever failed on {d.failed} "
                  f"question(s); see {d.path}", file=sys.stderr)


def _all_rows(req: SweepRequest, rows) -> int:
    from ci_eval.errors import EXIT_OK, EXIT_RETRIEVER_FAILED
    from ci_eval.inputs.artefact_file import read_run
    from ci_eval.inputs.files import check_writable

    folder = Path(req.folder)
    check_writable(row_file(folder, 1))
    if req.svg:
        check_writable(req.svg)
    loaded = checked_rows(rows)
    metrics = headline(req, rows[0].config.k, spans=all(_has_spans(i) for i in loaded))
    loaded = [_measuring(inputs, metrics) for inputs in loaded]
    for inputs in loaded:
        _check_metrics(metrics, inputs.config.metrics, inputs.config.source)
    folder.mkdir(parents=True, exist_ok=True)
    done = []
    for row, inputs in zip(rows, loaded):
        d = run_row(row, inputs, row_file(folder, row.number), cache_dir=req.cache,
                    default_cache=folder / "cache", count=len(rows), show_progress=not req.quiet)
        if not req.quiet and d.cache is not None:
            print(f"ci-eval sweep: row {d.number}: {d.cache[0]} answered from the retrieval cache, "
                  f"{d.cache[1]} asked", file=sys.stderr)
        done.append(d)
    read = [(d.label, read_run(d.path), d.notes) for d in done]
    _print_table(req, read, metrics, req.svg or str(folder / "sweep.svg"))
    if any(d.failed for d in done):
        _say_failed(done)
        return EXIT_RETRIEVER_FAILED
    return EXIT_OK


def _tabulate(req: SweepRequest) -> int:
    from ci_eval.errors import EXIT_OK, EXIT_RETRIEVER_FAILED
    from ci_eval.inputs.files import check_writable
    from ci_eval.inputs.sweep_rows import read_rows

    if req.svg:
        check_writable(req.svg)
    read = [(label, artefact, ()) for label, artefact in read_rows(req.from_dir)]
    metrics = headline(req, read[0][1].header.k, spans=all(a.header.gold_evidence for _, a, _ in read))
    for label, artefact, _ in read:
        _check_metrics(metrics, artefact.header.metrics, f"{req.from_dir} (row {label})")
    failed = _print_table(req, read, metrics, req.svg)
    return EXIT_RETRIEVER_FAILED if failed else EXIT_OK


def _print_table(req: SweepRequest, read, metrics, svg_path) -> int:
    """Print the table of ``read`` ([(label, Artefact, notes)]) and write the chart; the
    number of rows with failed questions back."""
    from ci_eval.core.compare.sweep import row_values, sweep_table
    from ci_eval.core.report.render_sweep import RENDERERS
    from ci_eval.core.report.sweep_chart import sweep_svg
    from ci_eval.inputs.files import atomic_write

    table = sweep_table([row_values(label, a, metrics, notes) for label, a, notes in read], metrics)
    sys.stdout.write(RENDERERS[req.format](table))
    if svg_path:
        atomic_write(svg_path, sweep_svg(table))
        if not req.quiet:
            print(f"ci-eval sweep: chart written to {svg_path}", file=sys.stderr)
    return sum(1 for r in table.rows if r.failed)
