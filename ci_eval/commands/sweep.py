"""`ci-eval sweep`: several configurations on one gold set, one table."""

from __future__ import annotations

HELP = """Run several retriever configurations against one gold set and print one table read
as a ladder: a row per configuration, each against the row before and against the first
(the paired 95 % interval of each change, sign-flip permutation test, one Holm family for
every mark and sentence), and the configuration that is provably best, or how many
questions would tell the top two apart. When the rows search different indexes
(chunkings), the best row is decided on evidence recall (span gold), never on chunk-level
metrics, which cannot rank chunkings.

The rows are config files (labelled by their `label`, else their file name), or one config
and a grid of values (the cartesian product, the first value of each axis in the first
row). A grid key is k, relevance_level, abstain_below, a [retriever] key (depth, timeout,
path, ...; retriever.NAME), an [index] key (index.manifest, index.version,
index.callable), or a param the config sets: in [index] params (passed to index.callable
and to the retriever, so one key cuts the index and searches it) or [retriever] params.
index.params.NAME and params.NAME add a new one; any other key is refused with the list.
Default columns: recall@k and MRR, plus evidence recall and precision at k on a gold set
with spans.

Each row's artefact is written to DIR/row-NN.json and its retrieval goes through the
retrieval cache (--cache, else [retriever] cache, else DIR/cache when the index has a
version): running the sweep again, or a row that differs only in k, metrics or the
relevance level, asks the retriever nothing it was asked before. Each row's warnings and
first error are printed and listed under the table; a row whose answers are mostly ids
outside its own index stops the sweep (exit 4).

On an Actions matrix, one job per row (and `--shard I/N` within a row), then one job that
merges each row's shards (`ci-eval merge`) and tabulates the folder (--from).

example:
  ci-eval sweep --config ci-eval.toml --grid chunking=fixed-512,headings --label "512-token chunks" headings
  ci-eval sweep chunks-512.toml headings.toml headings-bm25-rrf.toml headings-rrf-rerank.toml
  ci-eval sweep --config ci-eval.toml --grid fusion=none,rrf --row 2 --out rows/row-02.json
  ci-eval sweep --from rows --format csv
exit codes: 0 the table printed; 2 bad input (nothing run; with --from, a row missing from
DIR or rows of another sweep in it, no table); 4 the retriever failed on some question of
some row (the table is still printed, over the questions every row measured), or a row
answered from another index than its own (the sweep stops there)."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("sweep", help="run several configurations on one gold set and print one table",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("configs", nargs="*", metavar="CONFIG", help="config files, one row each, the first the reference")
    p.add_argument("--config", metavar="FILE", help="the one config a --grid varies (default: found in . or its parents)")
    p.add_argument("--grid", nargs="+", metavar="KEY=V1,V2", help="the values of one or more keys; one row per combination")
    p.add_argument("--metrics", metavar="LIST",
                   help="comma-separated headline metrics, the first deciding the best row unless the rows' "
                        "indexes differ (default: recall@k,mrr, and evidence_recall@k,evidence_precision@k "
                        "on span gold)")
    p.add_argument("--dir", metavar="DIR", default="ci-eval-sweep",
                   help="folder for the rows' artefacts, the chart and the cache (default: %(default)s)")
    p.add_argument("--row", type=int, metavar="N", help="run only row N (1-based) into --out: one matrix job")
    p.add_argument("--shard", metavar="I/N", help="with --row: only shard I of N of the row's questions")
    p.add_argument("--out", metavar="FILE", help="with --row: the row's artefact")
    p.add_argument("--from", dest="from_dir", metavar="DIR",
                   help="tabulate the row artefacts in DIR (written by --row, merged) instead of running")
    p.add_argument("--label", nargs="+", metavar="LABEL",
                   help="the rows' labels, one per row in order (default: a config's `label`, else its "
                        "file's name; a grid row its values)")
    p.add_argument("--list", action="store_true", help="print the rows (number, label) and run nothing")
    p.add_argument("--format", choices=("markdown", "json", "csv"), default="markdown",
                   help="the table's format (default: %(default)s)")
    p.add_argument("--svg", metavar="FILE", help="the dot-and-whisker chart (default: DIR/sweep.svg when rows run)")
    p.add_argument("--cache", metavar="DIR", help="retrieval cache folder (default: see above)")
    p.add_argument("--quiet", action="store_true", help="no progress on the terminal")
    p.set_defaults(func=run)


def run(args) -> int:
    from ci_eval.retrieval.sweep_run import SweepRequest, sweep

    return sweep(SweepRequest(
        configs=tuple(args.configs), config=args.config, grid=tuple(args.grid or ()), metrics=args.metrics,
        folder=args.dir, row=args.row, shard=args.shard, out=args.out, from_dir=args.from_dir,
        list_only=args.list, format=args.format, svg=args.svg, cache=args.cache, quiet=args.quiet,
        labels=tuple(args.label or ())))
