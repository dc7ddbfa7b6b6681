"""`ci-eval history`: a folder of run artefacts -> each question's and each tag's story over the runs."""

from __future__ import annotations

HELP = """Read the run artefacts in a folder (one `ci-eval run` output or downloaded workflow
artifact's ci-eval-run.json each, any file names: they are put in the order they were made)
and say, per question, its state at each run (hit at k, first gold rank, each metric), the
run since which it has been failing and the commit that broke it, and whether it flaps
(changes state while its gold and the retriever's config stay the same); per tag, each
headline metric over the runs with the runs where it moved beyond noise. The artefacts are
read one at a time, never held. docs/history.md has the details.

examples:
  ci-eval history runs/
  ci-eval history runs/ --last 12 --svg-out heat.svg --trend-svg-out trend.svg
  ci-eval history runs/ --format csv > history.csv
exit codes: 0 done; 2 bad input or usage."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("history", help="per-question and per-tag history over a folder of run artefacts",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", metavar="FOLDER", help="a folder of run artefacts (*.json)")
    p.add_argument("--format", choices=("markdown", "json", "csv"), default="markdown",
                   help="what to print on stdout (default: markdown)")
    p.add_argument("--last", type=int, metavar="N", help="only the N most recent runs")
    p.add_argument("--svg-out", metavar="FILE", help="also write the heat map (questions x runs) here")
    p.add_argument("--trend-svg-out", metavar="FILE", help="also write the per-tag trend lines here")
    p.add_argument("--rows", type=int, default=40, metavar="N",
                   help="questions the heat map shows one row each, worst first (default 40; "
                   "the rest are summarised)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)


def run(args) -> int:
    import sys

    from ci_eval.errors import EXIT_OK, UsageError
    from ci_eval.inputs.history_runs import history_outputs

    if args.last is not None and args.last < 1:
        raise UsageError("--last takes a count of runs, 1 or more")
    if args.rows < 1:
        raise UsageError("--rows takes a count of questions, 1 or more")
    for piece in history_outputs(args.folder, args.format, last=args.last, svg_out=args.svg_out,
                                 trend_svg_out=args.trend_svg_out, rows=args.rows, quiet=args.quiet):
        sys.stdout.write(piece)
    return EXIT_OK
