"""`ci-eval merge`: the parts of a sharded run -> the artefact of the whole run."""

from __future__ import annotations

import sys

HELP = """Merge the parts written by `ci-eval run --shard I/N` into one run artefact, the one
an unsharded run would have written (times and latencies apart). Every mean, per-tag mean
and latency percentile is recomputed from the per-question rows. Refused (exit 2, naming the
part): a missing or duplicate shard, parts of different gold sets, configs, index versions
or commits, a question in two parts, a file that is not a part, a row whose metrics, status,
first gold rank, top score or judged@k differ from what its own gold and ranking give.

example:
  ci-eval run --shard 1/2 --out part-1.json && ci-eval run --shard 2/2 --out part-2.json
  ci-eval merge part-1.json part-2.json --out ci-eval-run.json
exit codes: 0 written; 2 bad input; 4 the retriever failed on some question (the merged
artefact is still written and names each failure)."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("merge", help="merge the parts of a sharded run into one artefact",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("parts", nargs="+", metavar="PART", help="part artefacts, one per shard, in any order")
    p.add_argument("--out", metavar="FILE", default="ci-eval-run.json", help="merged artefact path (default: %(default)s)")
    p.set_defaults(func=run)


def run(args) -> int:
    import os

    from ci_eval.core.artefact.run_failure import run_failure
    from ci_eval.errors import EXIT_OK, EXIT_RETRIEVER_FAILED, InputError
    from ci_eval.inputs.artefact_out import write_merged, written_rows
    from ci_eval.inputs.artefact_stream import read_part
    from ci_eval.inputs.files import check_writable

    clash = next((p for p in args.parts if os.path.exists(p) and os.path.exists(args.out)
                  and os.path.samefile(p, args.out)), None)
    if clash:
        raise InputError(f"would overwrite the part {clash}", "--out")
    check_writable(args.out)
    # Each part is checked by one pass over its lines, keeping its head and ids, then its
    # rows are read again a line at a time while the merge writes: no part is ever held whole.
    parts = [read_part(path) for path in args.parts]
    rows = [written_rows(p.source, p.ids, p.head.metrics) for p in parts]
    written = write_merged(args.out, parts, rows)
    failure = run_failure(written.columns.errors.count, written.totals.head.repeat)
    if failure:
        print(f"ci-eval: error: {failure}; see {args.out}", file=sys.stderr)
        return EXIT_RETRIEVER_FAILED
    print(f"merged {len(args.parts)} part(s), {written.columns.asked} questions, into {args.out}")
    return EXIT_OK
