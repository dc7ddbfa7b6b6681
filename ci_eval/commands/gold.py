"""`ci-eval gold anchor|remap|import|export|mine`: keep the gold set valid across
re-ingestions, move judgements in and out of other tools' formats, and find new questions."""

from __future__ import annotations

import argparse

HELP = """Look after the gold set between runs: anchor its ids to the chunks they name, remap
them after a re-ingestion, import judgements from TREC, BEIR or a spreadsheet, export them
back, or mine new candidate questions from a log. See docs/gold-lifecycle.md and
docs/question-set.md.

examples:
  ci-eval gold anchor
  ci-eval gold remap --manifest new-index.jsonl --write
  ci-eval gold mine queries.log --out mined.jsonl"""

ANCHOR_HELP = """Record, in the gold set's "anchors", the fingerprint (document, span, text hash,
text signature) of every gold id the index manifest holds, so a later re-ingestion can be
mapped back with `ci-eval gold remap`. Anchors of ids the index no longer holds are kept.
The gold set is rewritten (atomically) only when an anchor was added or changed.

example:
  ci-eval gold anchor --config ci-eval.toml
  ci-eval gold anchor --gold gold.json --manifest index.jsonl
exit codes: 0 done; 2 bad input."""

REMAP_HELP = """Map the gold set's stale ids (ids the new index no longer holds) onto the new
index, from their anchors. Automatic only where the text proves it: the same text hash
under a new id, or new chunks covering the old span whose text bears it out. A span the
text contradicts, a similar text signature, duplicated text, or a new id the question
already grades otherwise is a proposal; anything else stays unresolved. Confidence is the
share of the old text the new ids hold (0..1). Prints the table; a dry run unless --write.

examples:
  ci-eval gold remap --manifest new-index.jsonl
  ci-eval gold remap --manifest new-index.jsonl --write --accept-proposals
A manifest that does not fit is refused (exit 2): the gold set's own version without its
ids, a version the gold set was remapped away from, or no version when the gold set has
one (name it with --to-version).
exit codes: 0 every stale id has a remap; 1 some stay stale (unresolved, or proposals not
accepted); 2 bad input, or a manifest that does not fit."""

IMPORT_HELP = """Import judgements into a new gold set (or, with --merge, into an existing one):
  --format trec QRELS TOPICS   TREC qrels, topics as TREC SGML or id<TAB>text lines
  --format beir FOLDER         queries.jsonl and qrels/<split>.tsv (corpus.jsonl becomes an
                               index manifest with --manifest-out)
  --format csv FILE            header: question, gold (ids separated by ';', id=grade for
                               a grade), optional id and tags
  --format jsonl FILE          {"id"?, "question", "gold": [...] or {id: grade}, "tags"?}
A question id already used, or the same question text twice, is an error naming both places.

examples:
  ci-eval gold import --format trec qrels.txt topics.txt --out gold.json
  ci-eval gold import --format beir scifact --manifest-out index.jsonl --out gold.json
  ci-eval gold import --format csv labels.csv --out gold.json --merge
exit codes: 0 written; 2 bad input (nothing written)."""

EXPORT_HELP = """Write the gold set's judgements as TREC (qrels.txt, topics.tsv) or BEIR
(queries.jsonl, qrels/<split>.tsv) files into a folder, for ci-eval evaluate, trec_eval,
ranx or pytrec_eval.

examples:
  ci-eval gold export --format trec --out judgements
  ci-eval evaluate judgements/qrels.txt run.trec
exit codes: 0 written; 2 bad input, or a file exists without --force (nothing written)."""

MINE_HELP = """Mine candidate questions from what users asked: a plain text log (one question a
line), JSON lines (--field names the question's key, dotted for nested objects) or
OpenInference/OTLP traces (the input.value of retrieval spans). Questions are normalised
(case, punctuation, spacing) and counted; near-duplicates are folded into the most-asked
one, and questions near the gold set's own (or ones already kept or binned) are dropped.
A sample spread over topic clusters and frequency bands is written as the candidates file
`ci-eval label --candidates` reads, each with how often it was asked.

examples:
  ci-eval gold mine queries.log --out mined.jsonl && ci-eval label --candidates mined.jsonl
  ci-eval gold mine app-log.jsonl --field request.query --count 80 --seed 3 --out mined.jsonl
  ci-eval gold mine traces.jsonl --format openinference --out mined.jsonl
exit codes: 0 written; 2 bad input, or --out exists without --force (nothing written)."""


def _parser(sub, name: str, help_: str, description: str):
    return sub.add_parser(name, help=help_, description=description,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def _targets(p, manifest_help: str) -> None:
    p.add_argument("--config", metavar="FILE", help="ci-eval.toml or pyproject.toml (default: found in .)")
    p.add_argument("--gold", metavar="FILE", help="the gold set (default: the configuration's gold_set)")
    p.add_argument("--manifest", metavar="FILE", help=manifest_help)


def register(sub) -> None:
    p = _parser(sub, "gold", "anchor, remap, import and export the gold set", HELP)
    gold_sub = p.add_subparsers(dest="gold_command", metavar="SUBCOMMAND", parser_class=type(p))
    p.set_defaults(func=lambda args: _missing_subcommand(p))

    a = _parser(gold_sub, "anchor", "record the fingerprint of every gold id", ANCHOR_HELP)
    _targets(a, "the index manifest (default: the configuration's [index])")
    a.set_defaults(func=run_anchor)

    r = _parser(gold_sub, "remap", "map stale gold ids onto a re-ingested index", REMAP_HELP)
    _targets(r, "the new index's manifest (default: the configuration's [index])")
    r.add_argument("--write", action="store_true", help="rewrite the gold set (default: a dry run)")
    r.add_argument("--accept-proposals", action="store_true",
                   help="apply proposals (similar text) as well as automatic remaps")
    r.add_argument("--threshold", type=float, default=0.5, metavar="S",
                   help="lowest share of the old text a signature proposal must hold, 0..1 (default: %(default)s)")
    r.add_argument("--to-version", metavar="V",
                   help="the new index's version, for a manifest that names none")
    r.add_argument("--by", metavar="NAME", help="who remapped, for the provenance (default: the user)")
    r.set_defaults(func=run_remap)

    i = _parser(gold_sub, "import", "import judgements from TREC, BEIR, CSV or JSON lines", IMPORT_HELP)
    i.add_argument("--format", required=True, choices=("trec", "beir", "csv", "jsonl"), help="the source format")
    i.add_argument("sources", nargs="+", metavar="PATH", help="the source files or folder (see above)")
    i.add_argument("--out", required=True, metavar="FILE", help="the gold set to write")
    i.add_argument("--merge", action="store_true", help="add to the gold set at --out instead of refusing")
    i.add_argument("--split", default="test", help="BEIR qrels split (default: %(default)s)")
    i.add_argument("--topic-field", default="title", choices=("title", "desc"),
                   help="which SGML topic field is the question (default: %(default)s)")
    i.add_argument("--index-version", metavar="V", help="the index version the ids belong to")
    i.add_argument("--manifest-out", metavar="FILE", help="BEIR: write corpus.jsonl as an index manifest")
    i.add_argument("--by", metavar="NAME", help="who imported, for the provenance (default: the user)")
    i.set_defaults(func=run_import)

    e = _parser(gold_sub, "export", "export judgements as TREC or BEIR files", EXPORT_HELP)
    e.add_argument("--format", required=True, choices=("trec", "beir"), help="the target format")
    e.add_argument("--config", metavar="FILE", help="ci-eval.toml or pyproject.toml (default: found in .)")
    e.add_argument("--gold", metavar="FILE", help="the gold set (default: the configuration's gold_set)")
    e.add_argument("--out", required=True, metavar="DIR", help="the folder to write into")
    e.add_argument("--split", default="test", help="BEIR qrels split name (default: %(default)s)")
    e.add_argument("--force", action="store_true", help="replace files that already exist")
    e.set_defaults(func=run_export)

    m = _parser(gold_sub, "mine", "mine candidate questions from a log of what users asked", MINE_HELP)
    m.add_argument("log", metavar="LOG", help="the log: text, JSON lines or OpenInference traces")
    m.add_argument("--format", choices=("text", "jsonl", "openinference"),
                   help="the log's format (default: jsonl for .jsonl/.ndjson/.json or with --field, else text)")
    m.add_argument("--field", metavar="KEY", help='JSON lines: the question\'s key, dotted for nesting (default: "question")')
    m.add_argument("--out", required=True, metavar="FILE", help="the candidates file to write")
    m.add_argument("--count", type=int, default=50, metavar="N", help="how many candidates (default: %(default)s)")
    m.add_argument("--seed", type=int, default=0, help="the sample's seed (default: %(default)s)")
    m.add_argument("--topics", type=int, default=10, metavar="K",
                   help="topic clusters to spread the sample over (default: %(default)s)")
    m.add_argument("--similarity", type=float, default=0.5, metavar="S",
                   help="term-set similarity at which two questions are near-duplicates, 0..1 (default: %(default)s)")
    m.add_argument("--config", metavar="FILE", help="ci-eval.toml or pyproject.toml (default: found in ., if any)")
    m.add_argument("--gold", metavar="FILE", help="the gold set whose questions are not news (default: the configuration's)")
    m.add_argument("--no-gold", action="store_true", help="keep questions the gold set already has")
    m.add_argument("--groups-out", metavar="FILE", help="also write every group and what was folded into it")
    m.add_argument("--force", action="store_true", help="replace --out (and --groups-out) if they exist")
    m.set_defaults(func=run_mine)


def _missing_subcommand(parser) -> int:
    from ci_eval.errors import UsageError

    raise UsageError(f"a subcommand is needed: anchor, remap, import, export or mine (see '{parser.prog} --help')")


def run_anchor(args) -> int:
    from ci_eval.gold.lifecycle import anchor, resolve

    targets = resolve(args.config, args.gold, args.manifest)
    up = anchor(targets)
    print(f"{targets.gold_path}: {len(up.anchors)} anchored id(s): {len(up.added)} new, "
          f"{len(up.refreshed)} refreshed"
          + (f"; {len(up.missing)} gold id(s) not in {targets.index.source} (stale)" if up.missing else ""))
    if not up.anchors:
        print(f"{targets.index.source} gives ids only: add doc/start/end and text or hash to its entries "
              "to anchor on (see docs/gold-lifecycle.md)")
    return 0


def run_remap(args) -> int:
    from ci_eval.core.gold.remap import PROPOSED, UNRESOLVED, format_plan
    from ci_eval.errors import UsageError
    from ci_eval.gold.lifecycle import record, remap, resolve

    if not 0 <= args.threshold <= 1:
        raise UsageError(f"--threshold {args.threshold}: must be between 0 and 1")
    targets = resolve(args.config, args.gold, args.manifest)
    plan = remap(targets, write=args.write, accept_proposals=args.accept_proposals,
                 record=record(args.by), threshold=args.threshold, to_version=args.to_version)
    print(format_plan(plan, args.accept_proposals))
    applied = plan.applied(args.accept_proposals)
    if args.write and applied:
        print(f"{targets.gold_path}: rewritten for index {args.to_version or targets.index.version or 'unversioned'}")
    elif applied:
        print("dry run: pass --write to rewrite the gold set")
    collided = sum(bool(m.collisions) for m in plan.mappings)
    left = plan.count(UNRESOLVED) + (collided if args.accept_proposals else plan.count(PROPOSED))
    return 1 if left else 0


def _left_out(result) -> str:
    """What the import did not write, counted aloud by reason, each with its first id."""
    reasons: dict[str, list[str]] = {}
    for qid, why in result.skipped:
        reasons.setdefault(why, []).append(qid)
    parts = [f"{len(ids)} left out ({why}, first: {ids[0]!r})" for why, ids in reasons.items()]
    if result.repeated:
        parts.append(f"{result.repeated} repeated judgement(s) with the same grade kept once")
    return "".join(f"; {p}" for p in parts)


def run_import(args) -> int:
    from ci_eval.gold.importing import import_gold
    from ci_eval.gold.lifecycle import record

    result = import_gold(args.format, args.sources, args.out, merge=args.merge, record=record(args.by),
                         split=args.split, field=args.topic_field, index_version=args.index_version,
                         manifest_out=args.manifest_out)
    print(f"{args.out}: {result.added} question(s) imported from {args.format}" + _left_out(result))
    if args.manifest_out:
        print(f"{args.manifest_out}: the corpus as an index manifest")
    return 0


def run_export(args) -> int:
    from ci_eval.gold.export import export
    from ci_eval.gold.store import read_gold

    path = args.gold
    if not path:
        from ci_eval.inputs.loaders import load_config

        path = load_config(args.config).gold_set
    _, gold = read_gold(path)
    for written in export(gold, args.format, args.out, split=args.split, force=args.force,
                          source=path):
        print(f"{written}: written")
    return 0


def run_mine(args) -> int:
    from ci_eval.errors import UsageError
    from ci_eval.gold.mine import gold_path_for, mine_log
    from ci_eval.inputs.question_log import guess_format
    from ci_eval.retrieval.progress import Progress

    if args.count < 1 or args.topics < 1:
        raise UsageError("--count and --topics must be at least 1")
    if not 0 < args.similarity <= 1:
        raise UsageError(f"--similarity {args.similarity}: must be above 0 and at most 1")
    fmt = args.format or guess_format(args.log, args.field)
    gold = gold_path_for(args.gold, args.config, args.no_gold)
    bars: list = []

    def tick(n: int, total: int) -> None:
        if not bars:
            bars.append(Progress(total, "folding near-duplicates"))
        bars[0].update(n)

    result, skipped = mine_log(args.log, fmt, args.field or "question", args.out, gold=gold, count=args.count,
                               seed=args.seed, topics=args.topics, similarity=args.similarity,
                               groups_out=args.groups_out, force=args.force, tick=tick)
    for bar in bars:
        bar.close()
    print(f"{args.log}: {result.read} question(s) read, {result.distinct} distinct after normalising"
          + (f" ({len(skipped)} line(s) without a question skipped, first: line {skipped[0]})" if skipped else ""))
    print(f"{len(result.known)} already in {gold} dropped; " if gold else "no gold set to compare with; ", end="")
    print(f"{result.folded} near-duplicate(s) folded into {len(result.groups)} question(s)")
    print(f"{args.out}: {len(result.chosen)} candidate(s) over {len(result.topics)} topic(s); "
          f"next: ci-eval label --candidates {args.out}")
    return 0
