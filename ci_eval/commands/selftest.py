"""`ci-eval selftest`: what this gold set's gate can and cannot see, by simulation on the
base run (core/compare/selftest.py)."""

from __future__ import annotations

HELP = """Simulate comparisons on a base run artefact (written by `ci-eval run`, with or
without evidence metrics) and decide each one with the real gate: the base against itself
(no change: how often each rule fails when nothing changed) and against heads where 1, 2, 3
and 5 questions' gold chunks are pushed past k (how often each rule catches that). Prints a
line per configured rule (every kind: min, max_drop, protected, max_new_misses, tag_min, ...)
and one for the gate as a whole. The gate is the [gate] table of the project's config,
found as `compare` finds it (without one, the [gate] the artefact's run recorded), with the
--min and --max-drop flags on top.

examples:
  ci-eval selftest base.json
  ci-eval selftest base.json --no-config --max-drop hit@5=0.05 --pairs 200
  ci-eval selftest base.json --jitter 0.1 --format json
exit codes: 0 the table was printed; 2 bad input or usage."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("selftest", help="simulate what the gate can detect on this gold set",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("artefact", metavar="ARTEFACT", help="the base run artefact")
    p.add_argument("--config", metavar="FILE", help="take the gate from this config's [gate]")
    p.add_argument("--no-config", action="store_true", help="the gate is the flags alone")
    p.add_argument("--min", action="append", default=[], metavar="METRIC=VALUE",
                   help="a floor, e.g. --min hit@5=0.8 (repeatable)")
    p.add_argument("--max-drop", action="append", default=[], metavar="METRIC=VALUE",
                   help="an allowed absolute drop, e.g. --max-drop mrr=0.05 (repeatable)")
    p.add_argument("--pairs", type=int, default=50, metavar="N",
                   help="simulated comparisons per column (default 50)")
    p.add_argument("--jitter", type=float, default=0.0, metavar="P",
                   help="run-to-run noise: chance each adjacent pair of results swaps in each "
                   "simulated run (default 0: a deterministic retriever)")
    p.add_argument("--seed", type=int, default=None, help="the simulation's seed")
    p.add_argument("--format", choices=("markdown", "json"), default="markdown")
    p.set_defaults(func=run)


def _checked(args) -> None:
    from ci_eval.errors import UsageError

    if args.pairs < 1:
        raise UsageError(f"--pairs must be at least 1, got {args.pairs}")
    if not 0.0 <= args.jitter <= 1.0:
        raise UsageError(f"--jitter must be between 0 and 1, got {args.jitter}")


def run(args) -> int:
    import json
    import sys

    from ci_eval.commands.compare import _gate_table
    from ci_eval.core.compare.selftest import recorded_gate, selftest
    from ci_eval.core.compare.stats import SEED
    from ci_eval.core.report.render_selftest import render_selftest
    from ci_eval.errors import InputError
    from ci_eval.inputs.artefact_file import read_run_data
    from ci_eval.report import policy_from

    _checked(args)
    gate, path, _, _ = _gate_table(args)
    data = read_run_data(args.artefact)
    if path is None and not args.no_config:
        # no config file here: the [gate] the run itself recorded (an artefact from CI); a
        # run that recorded none had the default gate
        gate = recorded_gate(data)
    policy = policy_from(gate, args.min, args.max_drop)
    result = selftest(data, policy, pairs=args.pairs, jitter=args.jitter,
                      seed=SEED if args.seed is None else args.seed)
    if result.questions < 6:
        raise InputError(f"{result.questions} answerable measured questions; a simulation needs "
                         "at least 6", args.artefact, "questions")
    if args.format == "json":
        sys.stdout.write(json.dumps(result.as_dict(), indent=1) + "\n")
    else:
        sys.stdout.write(render_selftest(result))
    return 0
