"""`ci-eval demo`: the whole product on data that ships with Python, offline."""

from __future__ import annotations

HELP = """Run the embedded demo: a BM25 retriever over the Python language reference that ships
with this interpreter (pydoc_data.topics), a hand-labelled gold set, a baseline and a
changed retriever configuration, and the PR comment ci-eval would post for the change.
Needs no files of your own and no network.

writes:
  DIR/base.json    the baseline run artefact
  DIR/head.json    the changed configuration's run artefact
  DIR/comment.md   the PR comment (what the action posts)
  DIR/summary.md   the full report (what the action writes to the job summary)
  DIR/scores.svg   top-score distributions, answerable vs unanswerable
  DIR/trend.svg    headline metrics over the recent runs (here: base, then head)

With --sweep, the seeds' ladder on the demo instead (`ci-eval sweep` over
ci_eval/demo/sweep/: 512-character windows, chunks on headings, a second ranker fused by
reciprocal rank, a rerank of the top 50), each step against the one before, on the demo's
gold set as document spans, the best row decided on evidence recall (which compares
chunkings); the rows' artefacts go to DIR/sweep/.

example:
  ci-eval demo --out demo-out
  ci-eval demo --sweep --out demo-out"""

# The sweep's rows, the first the reference (ci_eval/demo/sweep/NAME.toml).
SWEEP_ROWS = ("window-512", "headings", "headings-rrf", "headings-rrf-rerank")


def register(sub) -> None:
    import argparse

    p = sub.add_parser("demo", help="run the embedded demo (offline) and print the PR comment",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", metavar="DIR", default="ci-eval-demo", help="output folder (default: %(default)s)")
    p.add_argument("--quiet", action="store_true", help="write the files without printing the comment")
    p.add_argument("--sweep", action="store_true",
                   help="print the table of the demo's configurations side by side (ci-eval sweep) instead")
    p.set_defaults(func=run)


def run_sweep(args) -> int:
    from importlib import resources
    from pathlib import Path

    from ci_eval.retrieval.sweep_run import SweepRequest, sweep

    folder = resources.files("ci_eval.demo").joinpath("sweep")
    configs = tuple(str(folder.joinpath(f"{name}.toml")) for name in SWEEP_ROWS)
    return sweep(SweepRequest(configs=configs, folder=str(Path(args.out) / "sweep"), quiet=args.quiet))


def run(args) -> int:
    import sys
    from pathlib import Path

    if args.sweep:
        return run_sweep(args)
    from ci_eval.core.artefact.artefact import carry_history
    from ci_eval.demo.run import demo_artefact, demo_config_path
    from ci_eval.inputs.artefact_file import read_run
    from ci_eval.inputs.files import atomic_write, check_writable
    from ci_eval.inputs.loaders import load_config
    from ci_eval.report import BaselineInfo, build_report, policy_from

    out = Path(args.out)
    check_writable(out / "head.json")
    print("ci-eval demo: the Python language reference as the corpus, BM25 as the retriever", file=sys.stderr)
    # Each run streams to its file; the report reads them back as `ci-eval compare` would.
    demo_artefact("base", out / "base.json", show_progress=not args.quiet)
    base = read_run(out / "base.json")
    demo_artefact("head", out / "head.json", history=carry_history(base), show_progress=not args.quiet)
    head = read_run(out / "head.json")
    if base.depth < head.header.k:  # judged@k reads the base at the head's k
        base = read_run(out / "base.json", top=head.header.k)
    config = load_config(demo_config_path("head"))
    report = build_report(
        base,
        head,
        policy_from(config.gate_rules),
        BaselineInfo(kind="builtin", description="the demo's baseline configuration (base.toml)"),
        head_path=str(out / "head.json"),
    )
    atomic_write(out / "comment.md", report.markdown)
    atomic_write(out / "summary.md", report.full_markdown)
    atomic_write(out / "scores.svg", report.svg)
    atomic_write(out / "trend.svg", report.trend_svg)
    if not args.quiet:
        print(report.markdown)
        from ci_eval.core.gold.remap import format_plan
        from ci_eval.demo.run import demo_remap

        print("\nThe head re-ingested the compound-statements page. `ci-eval gold remap --manifest "
              "NEW` on the gold set, anchored on the base index, prints:\n")
        print(format_plan(demo_remap()))
    print(f"ci-eval demo: wrote {out / 'base.json'}, {out / 'head.json'}, {out / 'comment.md'}, "
          f"{out / 'summary.md'}, {out / 'scores.svg'} and {out / 'trend.svg'}", file=sys.stderr)
    print("ci-eval demo: answer correctness in the failure matrix comes from a deterministic "
          "stand-in judge, not a real model", file=sys.stderr)
    # The demo shows what a failing gate looks like without failing the command itself.
    return 0
