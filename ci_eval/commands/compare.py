"""`ci-eval compare`: base artefact vs head artefact -> report, gate verdict, exit code."""

from __future__ import annotations

HELP = """Compare two run artefacts written by `ci-eval run`: which metrics moved and whether
the change is significant, which questions regressed and where their gold chunk went, stale
gold, the cutoff on unanswerable questions, gold-set edits. Prints the report and applies
the gate from the config's [gate] table and the --min / --max-drop flags.

examples:
  ci-eval compare base.json head.json --config ci-eval.toml
  ci-eval compare --no-base head.json --min hit@5=0.8
  ci-eval compare base.json head.json --max-drop mrr=0.05 --format json
exit codes: 0 the gate passes; 1 it fails; 2 bad input or usage."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("compare", help="compare two run artefacts and apply the gate",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("artefacts", nargs="+", metavar="ARTEFACT",
                   help="BASE HEAD, or HEAD alone with --no-base")
    p.add_argument("--no-base", action="store_true",
                   help="no baseline (a first run): only floors and errors are checked")
    p.add_argument("--format", choices=("markdown", "json"), default="markdown",
                   help="what to print on stdout (default: markdown, the PR comment)")
    p.add_argument("--config", metavar="FILE",
                   help="take the gate from this config's [gate] table")
    p.add_argument("--min", action="append", default=[], metavar="METRIC=VALUE",
                   help="a floor on head's mean, e.g. --min hit@5=0.8 (repeatable)")
    p.add_argument("--max-drop", action="append", default=[], metavar="METRIC=VALUE",
                   help="an allowed absolute drop, e.g. --max-drop mrr=0.05 (repeatable)")
    p.add_argument("--marker", default="", metavar="SUFFIX",
                   help="marker suffix, one sticky comment per gold set")
    p.add_argument("--summary-out", metavar="FILE",
                   help="also write the full report (no size budget) here")
    p.add_argument("--svg-out", metavar="FILE",
                   help="also write the top-score plot (SVG) here")
    p.add_argument("--json-out", metavar="FILE", help="also write the JSON report here")
    p.set_defaults(func=run)


def run(args) -> int:
    from ci_eval.errors import EXIT_GATE_FAILED, EXIT_OK, UsageError
    from ci_eval.inputs.files import atomic_write
    from ci_eval.inputs.loaders import load_artefact, load_config
    from ci_eval.report import BaselineInfo, build_report, policy_from

    paths = list(args.artefacts)
    if args.no_base and len(paths) != 1:
        raise UsageError("with --no-base give only HEAD (see 'ci-eval compare --help')")
    if not args.no_base and len(paths) != 2:
        raise UsageError("give BASE and HEAD, or --no-base HEAD (see 'ci-eval compare --help')")
    gate = load_config(args.config).gate if args.config else {}
    policy = policy_from(gate, args.min, args.max_drop)
    base = None if args.no_base else load_artefact(paths[0])
    head = load_artefact(paths[-1])
    info = (BaselineInfo(kind="none", description="none was given (--no-base)")
            if args.no_base else BaselineInfo(kind="file"))
    report = build_report(base, head, policy, info, marker_suffix=args.marker)
    if args.summary_out:
        atomic_write(args.summary_out, report.full_markdown)
    if args.svg_out:
        atomic_write(args.svg_out, report.svg)
    if args.json_out:
        atomic_write(args.json_out, report.json)
    print(report.json if args.format == "json" else report.markdown, end="")
    return EXIT_OK if report.passed else EXIT_GATE_FAILED
