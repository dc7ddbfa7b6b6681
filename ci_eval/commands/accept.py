"""`ci-eval accept`: commit a pull request's intended losses, one reviewed entry each."""

from __future__ import annotations

HELP = """Accept losses this pull request meant: write each into the acceptance file (the
config's [gate] accepted, else accepted.toml beside the gold set, or --file), naming the
question, the gold chunk it lost and that chunk's rank on the base and on the head, with
your reason. Commit the file with the pull request: its diff is the review. An entry covers
that exact loss only; the same question losing another chunk, or falling elsewhere, fails
again. A question's new acceptance replaces its old one.

The losses come from the comparison: the two artefacts (--base, --head) with the question
ids or --all, or each loss spelled out with --loss as the PR comment prints it (no
artefact needed).

examples:
  ci-eval accept q-040 q-009 --reason "tokenizer change: these two need re-labelling" --base base.json --head head.json
  ci-eval accept --all --reason "new chunking, gold set re-labelled next" --base base.json --head head.json
  ci-eval accept --reason "new chunking" --loss q-040 'kb/faq#3' 2 9
exit codes: 0 written; 2 bad input or usage (a named question that lost nothing, no reason)."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("accept", help="accept a pull request's intended losses in the acceptance file",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("questions", nargs="*", metavar="QUESTION", help="question ids whose loss to accept")
    p.add_argument("--all", action="store_true", help="accept every loss of the comparison")
    p.add_argument("--reason", required=True, help="why these losses are intended (kept in the file)")
    p.add_argument("--base", metavar="ARTEFACT", help="the base run artefact of the comparison")
    p.add_argument("--head", metavar="ARTEFACT", help="the head run artefact of the comparison")
    p.add_argument("--loss", action="append", nargs=4, default=[],
                   metavar=("QUESTION", "CHUNK", "BASE_RANK", "HEAD_RANK"),
                   help="one loss as the PR comment prints it (HEAD_RANK - when the chunk left the ranking); repeatable")
    p.add_argument("--file", metavar="FILE", help="the acceptance file (default: from the config)")
    p.add_argument("--config", metavar="FILE", help="the config (default: found in . or its parents)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ci_eval.inputs.acceptances import AcceptRequest, accept

    print(accept(AcceptRequest(tuple(args.questions), args.all, args.reason, args.base, args.head,
                               tuple(tuple(x) for x in args.loss), args.file, args.config)))
    return 0
