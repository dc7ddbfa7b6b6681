"""``ci-eval evaluate``: trec_eval's command line and output, on the supported measures."""

from __future__ import annotations

import argparse
import sys

from ci_eval.errors import InputError, UsageError
from ci_eval.trec.measures import format_json, format_trec, measure_values, parse_measures, summary

HELP = """\
Evaluate a TREC run file against TREC qrels, printing what trec_eval 10.0 prints, line
for line, for the measures ci-eval computes: num_q, num_ret, num_rel, num_rel_ret, map,
recip_rank, P.N, recall.N, ndcg_cut.N and success.N (N a comma-separated list of
cutoffs; without one, trec_eval's defaults). Other trec_eval measures, including those
in the default set and in -m all_trec (runid, gm_map, Rprec, bpref, iprec_at_recall,
...), are not computed and not printed.

Where trec_eval 10.0 stops with an error, ci-eval does this instead:
  * a qrels query with no results, without -c: left out of the means, as trec_eval
    9.x did, with a note on stderr (trec_eval 10.0 exits with status 4);
  * a document listed twice for one query of the run, or judged twice: exit 2 naming
    the file and line;
  * blank lines in the qrels are skipped (trec_eval rejects them).
  * an id or number over 4,096 bytes: exit 2 naming the file and line (ids are held
    as wide as the longest, so one megabyte-long id would widen every row).
Run queries that have no judgments are ignored, as in trec_eval."""

EXAMPLE = """\
examples:
  ci-eval evaluate qrels.txt run.trec
  ci-eval evaluate -q -m ndcg_cut.10 -m P.5,10 -m recip_rank qrels.txt run.trec
  ci-eval evaluate -c -M 100 -m all_trec --format json qrels.txt run.trec"""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="trec_eval-compatible evaluation of a TREC run file",
        description=HELP,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-q", action="store_true", help="print each query's values, then 'all'")
    p.add_argument("-c", action="store_true",
                   help="score qrels queries missing from the run as 0 and count them in means")
    p.add_argument("-l", type=int, default=1, metavar="N",
                   help="lowest grade counted as relevant (default 1)")
    p.add_argument("-M", type=int, default=None, metavar="N",
                   help="use only the first N results of each query (after ordering)")
    p.add_argument("-m", action="append", metavar="MEASURE[.PARAMS]",
                   help="a measure to print (repeatable; default: trec_eval's official set)")
    p.add_argument("--format", choices=("trec", "json"), default="trec",
                   help="trec_eval's text (default) or JSON at full precision")
    p.add_argument("qrels", metavar="QRELS", help="qrels file: qid iter docid grade")
    p.add_argument("run", metavar="RUN", help="run file: qid Q0 docid rank score tag")
    p.set_defaults(func=run)


def run(args) -> int:
    from ci_eval.trec.judge import judge
    from ci_eval.trec.parse import read_qrels, read_run

    if args.l < 0:
        raise UsageError(f"-l {args.l}: the relevance level must be 0 or more")
    if args.M is not None and not 0 < args.M < 2**63:
        raise UsageError(f"-M {args.M}: must be a positive number of results, below 2**63")
    measures = parse_measures(args.m)
    qrels = read_qrels(args.qrels)
    results = read_run(args.run)
    judged = judge(qrels, results, complete=args.c, max_per_query=args.M,
                        relevance_level=args.l)
    if not judged.qids:
        raise InputError("no query has both judgments and results", source=args.run)
    if judged.missing and not args.c:
        n = len(judged.missing)
        shown = ", ".join(judged.missing[:3]) + (", ..." if n > 3 else "")
        print(f"ci-eval: note: {n} qrels quer{'y' if n == 1 else 'ies'} without results "
              f"left out ({shown}); pass -c to score {'it' if n == 1 else 'them'} 0",
              file=sys.stderr)
    values = measure_values(measures, judged)
    overall = summary(measures, values, len(judged.qids))
    if args.format == "json":
        text = format_json(measures, judged.qids, values, overall)
    else:
        text = format_trec(measures, judged.qids, values, overall, args.q)
    sys.stdout.write(text)
    return 0
