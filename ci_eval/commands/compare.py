"""`ci-eval compare`: base artefact vs head artefact -> report, gate verdict, exit code."""

from __future__ import annotations

HELP = """Compare two run artefacts written by `ci-eval run`: which metrics moved and whether
the change is significant, which questions regressed and where their gold chunk went, stale
gold, the cutoff on unanswerable questions, gold-set edits. Prints the report and applies
the gate: the [gate] table of the project's config (ci-eval.toml, else [tool.ci-eval] in
pyproject.toml, found in this folder or the nearest parent, as `run` finds it), with the
--min / --max-drop flags on top. A config without a [gate] table, or no config found, gets
the default gate: every question that loses its gold chunk from the top k fails, unless the
base's --repeat record shows it flapping or the loss is accepted (`ci-eval accept`, whose
file is read from the config's [gate] accepted, else accepted.toml beside the gold set, or
--accepted). --no-config leaves the flags alone. When base and head share too few
questions to compare, the report says "no comparison possible" and why, and the relative
rules fail.

examples:
  ci-eval compare base.json head.json
  ci-eval compare base.json head.json --config eval/strict.toml
  ci-eval compare base.json head.json --no-config --max-drop mrr=0.05 --format json
  ci-eval compare --no-base head.json --min hit@5=0.8
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
                   help="take the gate from this config's [gate] table instead of the one "
                   "found from the current folder")
    p.add_argument("--no-config", action="store_true",
                   help="use no config and no default rule: the gate is the --min / --max-drop flags alone")
    p.add_argument("--accepted", metavar="FILE",
                   help="the acceptance file ci-eval accept wrote (default: the config's [gate] "
                   "accepted, else accepted.toml beside the gold set)")
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


NO_CONFIG = "the default rule (no config found)"


def run(args) -> int:
    import os
    import sys

    from ci_eval.errors import EXIT_GATE_FAILED, EXIT_OK, InputError, UsageError
    from ci_eval.inputs.collector import collections_spaced
    from ci_eval.inputs.paired_read import read_pair
    from ci_eval.report import BaselineInfo, build_report, policy_from

    paths = list(args.artefacts)
    if args.no_base and len(paths) != 1:
        raise UsageError("with --no-base give only HEAD (see 'ci-eval compare --help')")
    if not args.no_base and len(paths) != 2:
        raise UsageError("give BASE and HEAD, or --no-base HEAD (see 'ci-eval compare --help')")
    gate, gate_path, source, accepted_path = _gate_table(args)
    policy = policy_from(gate, args.min, args.max_drop)
    if args.accepted and not os.path.isfile(args.accepted):  # asked for by name: never ignored
        raise InputError("acceptance file not found", args.accepted)
    accepted = _accepted(args.accepted or accepted_path, policy)
    # the base, then the head sharing its id strings (inputs/paired_read.py)
    base, head = read_pair(None if args.no_base else paths[0], paths[-1])
    info = (BaselineInfo(kind="none", description="none was given (--no-base)")
            if args.no_base else BaselineInfo(kind="file", path=paths[0]))
    # the report keeps what it builds (each listed change, its rows): collections spaced
    # out, as for a run, rather than walking a growing heap every 700 containers
    with collections_spaced():
        report = build_report(base, head, policy, info, marker_suffix=args.marker,
                              gate_source=source, gate_path=gate_path, accepted=accepted,
                              head_path=paths[-1])
        _write_outputs(args, report)
        shown = report.json if args.format == "json" else report.markdown
    if source == NO_CONFIG:  # said once everything else was read: bad input stays one line
        print("ci-eval: no ci-eval.toml (or [tool.ci-eval] in pyproject.toml) here or above: "
              "the gate is the default rule (lost_gold) with the --min / --max-drop flags on top",
              file=sys.stderr)
    print(shown, end="")
    return EXIT_OK if report.passed else EXIT_GATE_FAILED


def _write_outputs(args, report) -> None:
    """The files asked for besides the printed report."""
    from ci_eval.inputs.files import atomic_write

    if args.summary_out and (args.json_out or args.format == "json"):
        report.keep_listed()  # both list every change: each is built once
    if args.summary_out:
        atomic_write(args.summary_out, report.full_markdown)
    if args.svg_out:
        atomic_write(args.svg_out, report.svg)
    if args.json_out:
        atomic_write(args.json_out, report.json)


def _accepted(path: str | None, policy):
    """The committed acceptances, read when a per-question rule can use them."""
    from ci_eval.inputs.acceptances import read_acceptances

    if not policy.per_question:
        return None
    return read_acceptances(path)


def _gate_table(args) -> tuple[dict | None, str | None, str, str | None]:
    """The [gate] table to apply (None: the default gate), the config file it came from, how
    the report says it, and where the acceptance file is."""
    from ci_eval.errors import UsageError
    from ci_eval.inputs.loaders import discover_config, load_config

    flags = " with the --min / --max-drop flags on top" if args.min or args.max_drop else ""
    if args.no_config and args.config:
        raise UsageError("--config and --no-config contradict each other; give one")
    if args.no_config:
        return {}, None, "the flags only (--no-config)", None
    path = args.config or discover_config(".")
    if path is None:
        return None, None, NO_CONFIG, None
    config = load_config(path)
    default = "" if config.gate_rules is not None else " (no [gate] table: the default rule)"
    return config.gate_rules, str(path), default + flags, config.accepted_path

