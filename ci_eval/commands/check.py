"""`ci-eval check`: validate the config, gold set and index manifest without retrieving."""

from __future__ import annotations

HELP = """Validate the config, the gold set, the answers file and the index manifest without
running the retriever; list gold ids missing from the index (stale). Suits a pre-commit hook.

example:
  ci-eval check --config ci-eval.toml
exit codes: 0 all good; 1 stale gold ids found; 2 bad input."""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("check", help="validate config, gold set and index manifest (no retrieval)",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", metavar="FILE", help="ci-eval.toml or pyproject.toml (default: found in .)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ci_eval.inputs.loaders import load_config
    from ci_eval.retrieval.pipeline import load_inputs

    config = load_config(args.config)
    inputs = load_inputs(config)
    gold, manifest = inputs.gold, inputs.manifest
    answerable = sum(not q.unanswerable for q in gold.questions)
    print(f"{config.source}: ok ({config.retriever.type} retriever, k={config.k}, "
          f"{len(config.metrics)} metrics)")
    print(f"{config.gold_set}: ok ({len(gold.questions)} questions, {answerable} answerable, "
          f"{len(gold.questions) - answerable} unanswerable)")
    if manifest is None:
        print("index: no manifest configured, so stale gold ids cannot be checked")
        return 0
    stale = [(q.id, [g for g, _ in q.gold if g not in manifest.ids]) for q in gold.questions]
    stale = [(qid, ids) for qid, ids in stale if ids]
    version = manifest.version or "unversioned"
    print(f"{manifest.source}: ok (index {version}, {len(manifest.ids)} ids)")
    if gold.index_version and manifest.version and gold.index_version != manifest.version:
        print(f"index drift: the gold set was built against {gold.index_version!r}, "
              f"the index is {manifest.version!r}")
    _report_anchors(gold, manifest, config.gold_set)
    for qid, ids in stale:
        print(f"{config.gold_set}: question {qid!r}: stale gold id(s): {', '.join(ids)}")
    if stale:
        from ci_eval.core.remap import remap_hint
        from ci_eval.retrieval.pipeline import remap_of

        print(f"{sum(len(i) for _, i in stale)} stale gold id(s) in {len(stale)} question(s)")
        hint = remap_hint(remap_of(inputs).get("remap"))
        if hint:
            print(hint.replace("`", "'"))
        return 1
    print("no stale gold ids")
    return 0


def _report_anchors(gold, manifest, gold_path: str) -> None:
    """Say when `ci-eval gold anchor` would add or refresh anchors (check writes nothing)."""
    from ci_eval.core.anchors import update_anchors

    if not gold.anchors:
        return
    up = update_anchors(gold.questions, gold.anchors, manifest)
    if up.added or up.refreshed:
        print(f"{gold_path}: {len(up.added)} gold id(s) without an anchor, {len(up.refreshed)} anchor(s) "
              "out of date: run 'ci-eval gold anchor' to record them")
