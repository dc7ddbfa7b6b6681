"""`ci-eval selftest`: what this gold set's gate can and cannot see, by simulation on the
base run (core/compare/selftest.py)."""

from __future__ import annotations

HELP = """Simulate comparisons on a base run artefact (written by `ci-eval run`): base against
itself with run-to-run noise (A/A: how often the verdict and the gate raise a false alarm)
and against injected regressions (gold pushed past k, the top k shuffled, gold deleted from
the index, a re-chunk) on a share of the questions (how often each max_drop rule and the
verdict catch them). Prints a table, and how many questions would detect each rule's drop
with 80 % power. The gate is the [gate] table of the project's config, found as `compare`
finds it, with the --max-drop flags on top.

examples:
  ci-eval selftest base.json
  ci-eval selftest base.json --no-config --max-drop hit@5=0.05 --pairs 500
  ci-eval selftest base.json --share 0.1 --format json
exit codes: 0 the table was printed; 2 bad input or usage."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("selftest", help="simulate what the gate can detect on this gold set",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("artefact", metavar="ARTEFACT", help="the base run artefact")
    p.add_argument("--config", metavar="FILE", help="take the gate from this config's [gate]")
    p.add_argument("--no-config", action="store_true", help="the gate is the flags alone")
    p.add_argument("--max-drop", action="append", default=[], metavar="METRIC=VALUE",
                   help="an allowed absolute drop, e.g. --max-drop mrr=0.05 (repeatable)")
    p.add_argument("--pairs", type=int, default=200, metavar="N",
                   help="simulated comparisons per scenario (default 200)")
    p.add_argument("--share", type=float, default=0.2, metavar="X",
                   help="share of the questions an injected change touches (default 0.2)")
    p.add_argument("--jitter", type=float, default=0.1, metavar="P",
                   help="run-to-run noise: chance each adjacent pair of results swaps "
                   "(default 0.1)")
    p.add_argument("--seed", type=int, default=None, help="the simulation's seed")
    p.add_argument("--format", choices=("markdown", "json"), default="markdown")
    p.set_defaults(func=run, min=[])  # compare's gate lookup reads --min; selftest has none


def _checked(args) -> None:
    from ci_eval.errors import UsageError

    if args.pairs < 1:
        raise UsageError(f"--pairs must be at least 1, got {args.pairs}")
    for flag, value in (("--share", args.share), ("--jitter", args.jitter)):
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"{flag} must be between 0 and 1, got {value}")


def run(args) -> int:
    import json
    import sys

    from ci_eval.commands.compare import _gate_table
    from ci_eval.core.compare.selftest import selftest
    from ci_eval.core.compare.stats import SEED
    from ci_eval.core.report.render_selftest import render_selftest
    from ci_eval.errors import InputError
    from ci_eval.inputs.artefact_file import read_run
    from ci_eval.report import policy_from

    _checked(args)
    gate, _, _ = _gate_table(args)
    policy = policy_from(gate, [], args.max_drop)
    base = read_run(args.artefact, top=1000)
    kept = [q for q in base.questions if q.measured and not q.unanswerable and q.gold]
    if len(kept) < 6:
        raise InputError(f"{len(kept)} answerable measured questions; a simulation needs at "
                         "least 6", args.artefact, "questions")
    k = base.header.k
    result = selftest([list(q.top) for q in kept], [dict(q.gold) for q in kept],
                      tuple(base.header.metrics), k, policy,
                      level=float((base.config or {}).get("relevance_level", 1) or 1),
                      pairs=args.pairs, share=args.share, jitter=args.jitter,
                      seed=SEED if args.seed is None else args.seed)
    if args.format == "json":
        sys.stdout.write(json.dumps(result.as_dict(), indent=1) + "\n")
    else:
        sys.stdout.write(render_selftest(result, k))
    return 0
