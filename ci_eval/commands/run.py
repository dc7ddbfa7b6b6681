"""`ci-eval run`: run the configured retriever over the gold set and write the artefact."""

from __future__ import annotations

import sys

HELP = """Run the configured retriever over the gold set and write the run artefact.

The retriever is asked for `depth` results per question, not k: depth defaults to 3k (15
when k = 5) so the artefact can tell "just past k" from "gone". A python retriever is
called as fn(question, depth, **params); a command gets {"id", "question", "k": depth}.

The config is ci-eval.toml, else [tool.ci-eval] in pyproject.toml, in the current folder
and then its parents up to the repository root; relative paths, the python import path
and the command's working folder are the config file's folder. Everything short of the
retriever is checked first (as `ci-eval check` does). Any failure on any question
(an exception, None or a wrong type returned, sys.exit, a module that fails to import)
is an error on that question: counted, shown, exit 4, never a pass.

example:
  ci-eval run --config ci-eval.toml --out ci-eval-run.json
  ci-eval run --shard 2/8 --out part-2.json      # one part of eight; see `ci-eval merge`
  ci-eval run --cache .ci-eval-cache             # unchanged questions answered from the cache
  ci-eval run --repeat 3                         # is the retriever deterministic?
exit codes: 0 written; 2 bad input; 4 the retriever failed on some question (the artefact
is still written and names each failure)."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("run", help="run the retriever over the gold set and write the artefact",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="FILE",
                   help="ci-eval.toml or pyproject.toml (default: found in . or its parents)")
    p.add_argument("--out", metavar="FILE", default="ci-eval-run.json", help="artefact path (default: %(default)s)")
    p.add_argument("--base", metavar="FILE", help="base artefact whose history this run carries forward")
    p.add_argument("--shard", metavar="I/N",
                   help="run only shard I of N (1-based); a question's shard is sha256(id) mod N, "
                        "so adding questions moves no others")
    p.add_argument("--cache", metavar="DIR",
                   help="retrieval cache folder (overrides [retriever] cache; off by default)")
    p.add_argument("--repeat", metavar="N",
                   help="ask the retriever N times (2 to 20, past the cache) and record which questions' "
                        "rankings changed; the first pass is the one recorded")
    p.add_argument("--quiet", action="store_true", help="no progress and no summary on the terminal")
    p.set_defaults(func=run)


def run(args) -> int:
    from ci_eval.core.artefact.artefact import carry_history
    from ci_eval.core.artefact.repeat import parse_repeat, repeat_line
    from ci_eval.core.artefact.run_failure import run_failure
    from ci_eval.core.artefact.runsummary import run_summary
    from ci_eval.errors import EXIT_OK, EXIT_RETRIEVER_FAILED
    from ci_eval.inputs.files import check_writable
    from ci_eval.inputs.gitinfo import git_info
    from ci_eval.inputs.loaders import load_config
    from ci_eval.retrieval.pipeline import load_inputs, run_evaluation

    check_writable(args.out)
    shard = _shard(args.shard) if args.shard else None
    repeat = parse_repeat(args.repeat) if args.repeat is not None else None
    config = load_config(args.config)
    inputs = load_inputs(config)
    base = _base(args.base) if args.base else None
    written = run_evaluation(inputs, args.out, git=git_info(), history=carry_history(base),
                             show_progress=not args.quiet, shard=shard, cache_dir=args.cache,
                             repeat=repeat)
    totals, columns = written.totals, written.columns
    if not args.quiet:
        print(run_summary(totals, columns))
        if shard is not None:
            print(f"shard {shard}: {columns.asked} of {totals.head.gold_questions} questions; "
                  "merge the parts with `ci-eval merge`")
        if totals.head.cache is not None:
            hits, misses = totals.head.cache
            print(f"retrieval cache: {hits} answered from it, {misses} asked")
        if totals.head.repeat is not None:
            print(repeat_line(totals.head.repeat))
        if totals.head.answers is not None:
            from ci_eval.core.answers import summary_lines

            print("\n".join(summary_lines(totals.head.answers)))
        print(f"artefact written to {args.out}")
    errors = columns.errors
    failure = run_failure(errors.count, totals.head.repeat, errors.first, errors.unanswerable)
    if failure:
        print(f"ci-eval: error: {failure}; see {args.out}", file=sys.stderr)
        return EXIT_RETRIEVER_FAILED
    return EXIT_OK


# Imported only by the runs that use them: the artefact reader (msgspec and the row types)
# and the shard selection are 30 ms of a run's start-up otherwise.
def _shard(text: str):
    from ci_eval.core.artefact.shard import parse_shard

    return parse_shard(text)


def _base(path: str):
    from ci_eval.inputs.artefact_file import read_run

    return read_run(path)
