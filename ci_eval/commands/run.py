"""`ci-eval run`: run the configured retriever over the gold set and write the artefact."""

from __future__ import annotations

import sys

HELP = """Run the configured retriever over the gold set and write the run artefact.

example:
  ci-eval run --config ci-eval.toml --out ci-eval-run.json
  ci-eval run --shard 2/8 --out part-2.json      # one part of eight; see `ci-eval merge`
  ci-eval run --cache .ci-eval-cache             # unchanged questions answered from the cache
exit codes: 0 written; 2 bad input; 4 the retriever failed on some question (the artefact
is still written and names each failure)."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("run", help="run the retriever over the gold set and write the artefact",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="FILE", help="ci-eval.toml or pyproject.toml (default: found in .)")
    p.add_argument("--out", metavar="FILE", default="ci-eval-run.json", help="artefact path (default: %(default)s)")
    p.add_argument("--base", metavar="FILE", help="base artefact whose history this run carries forward")
    p.add_argument("--shard", metavar="I/N",
                   help="run only shard I of N (1-based); a question's shard is sha256(id) mod N, "
                        "so adding questions moves no others")
    p.add_argument("--cache", metavar="DIR",
                   help="retrieval cache folder (overrides [retriever] cache; off by default)")
    p.add_argument("--quiet", action="store_true", help="no progress and no summary on the terminal")
    p.set_defaults(func=run)


def run(args) -> int:
    from ci_eval.core.artefact import carry_history
    from ci_eval.core.runsummary import run_summary
    from ci_eval.core.shard import parse_shard
    from ci_eval.errors import EXIT_OK, EXIT_RETRIEVER_FAILED
    from ci_eval.inputs.files import atomic_write, check_writable
    from ci_eval.inputs.gitinfo import git_info
    from ci_eval.inputs.loaders import artefact_text, load_artefact, load_config
    from ci_eval.retrieval.pipeline import load_inputs, run_evaluation

    check_writable(args.out)
    shard = parse_shard(args.shard) if args.shard else None
    config = load_config(args.config)
    inputs = load_inputs(config)
    base = load_artefact(args.base) if args.base else None
    artefact = run_evaluation(inputs, git=git_info(), history=carry_history(base), show_progress=not args.quiet,
                              shard=shard, cache_dir=args.cache)
    atomic_write(args.out, artefact_text(artefact, args.out))
    if not args.quiet:
        print(run_summary(artefact))
        if shard is not None:
            print(f"shard {shard}: {len(artefact['questions'])} of {artefact['gold_set']['questions']} questions; "
                  "merge the parts with `ci-eval merge`")
        if "cache" in artefact:
            print(f"retrieval cache: {artefact['cache']['hits']} answered from it, {artefact['cache']['misses']} asked")
        print(f"artefact written to {args.out}")
    if artefact["summary"]["errors"]:
        print(f"ci-eval: error: the retriever failed on {artefact['summary']['errors']} question(s); "
              f"see {args.out}", file=sys.stderr)
        return EXIT_RETRIEVER_FAILED
    return EXIT_OK
