"""`ci-eval history`: a folder of run artefacts -> each question's and each tag's story over the runs."""

from __future__ import annotations

HELP = """Read the run artefacts in a folder (one `ci-eval run` output or downloaded workflow
artifact's ci-eval-run.json each, any file names: they are put in the order they were made)
and say, per question, its state at each run (hit at k, first gold rank, each metric), the
run since which it has been failing and the commit that broke it, and whether it flaps
(changes state while its gold and the retriever's config stay the same); per tag, each
headline metric over the runs with the runs where it moved beyond noise. The artefacts are
read one at a time, never held. A file that is not a run artefact, or a run of another
project (another gold set file or comment marker than most runs', or no question in common),
is skipped with a warning line. With --github OWNER/REPO the runs are the branch's successful
push runs of the workflow, their artifacts fetched through the GitHub API (GITHUB_TOKEN, and
GITHUB_API_URL for GitHub Enterprise) with the trust rules of the action's baseline lookup.
docs/history.md has the details.

examples:
  ci-eval history runs/
  ci-eval history runs/ --last 12 --svg-out heat.svg --trend-svg-out trend.svg
  ci-eval history runs/ --format csv > history.csv
  GITHUB_TOKEN=... ci-eval history --github acme/rag-app --branch main --last 30
exit codes: 0 done; 2 bad input or usage."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("history", help="per-question and per-tag history over a folder of run artefacts",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", metavar="FOLDER", nargs="?", help="a folder of run artefacts (*.json)")
    p.add_argument("--github", metavar="OWNER/REPO",
                   help="read the runs from this repository's workflow artifacts instead of a folder")
    p.add_argument("--branch", default="main", help="with --github: the branch whose push runs are read (default main)")
    p.add_argument("--workflow", default="ci-eval.yml",
                   help="with --github: the workflow file or id that runs the action (default ci-eval.yml)")
    p.add_argument("--artifact-name", default="ci-eval",
                   help="with --github: the action's artifact-name input (default ci-eval)")
    p.add_argument("--format", choices=("markdown", "json", "csv"), default="markdown",
                   help="what to print on stdout (default: markdown)")
    p.add_argument("--last", type=int, metavar="N",
                   help="only the N most recent runs (with --github default 30)")
    p.add_argument("--svg-out", metavar="FILE", help="also write the heat map (questions x runs) here")
    p.add_argument("--trend-svg-out", metavar="FILE", help="also write the per-tag trend lines here")
    p.add_argument("--rows", type=int, default=40, metavar="N",
                   help="questions the heat map shows one row each, worst first (default 40; "
                   "the rest are summarised)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)


def run(args) -> int:
    import os
    import sys
    from contextlib import nullcontext
    from pathlib import Path

    from ci_eval.errors import EXIT_OK, UsageError
    from ci_eval.github.history_source import branch_artefacts
    from ci_eval.inputs.collector import collections_spaced
    from ci_eval.inputs.history_runs import RunFiles, history_outputs

    if args.last is not None and args.last < 1:
        raise UsageError("--last takes a count of runs, 1 or more")
    if args.rows < 1:
        raise UsageError("--rows takes a count of questions, 1 or more")
    if (args.folder is None) == (args.github is None):
        raise UsageError("give a FOLDER or --github OWNER/REPO (see 'ci-eval history --help')")

    def say(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    source = nullcontext(RunFiles(Path(args.folder))) if args.github is None else branch_artefacts(
        args.github, args.branch, args.workflow, args.artifact_name, args.last or 30, dict(os.environ), say)
    # The rows of 30 runs make millions of short-lived containers and keep none; the cycle
    # collector run every 700 of them also walks the ids and tags the history keeps.
    # Spaced as compare's are: 3 runs of 100,000 in 7.3 and 8.9 s against 8.1 and 9.6 s
    # without (docs/history.md, "Memory and time").
    with source as files, collections_spaced():
        for piece in history_outputs(files, args.format, last=args.last, svg_out=args.svg_out,
                                     trend_svg_out=args.trend_svg_out, rows=args.rows, quiet=args.quiet):
            sys.stdout.write(piece)
    return EXIT_OK
