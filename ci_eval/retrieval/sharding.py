"""The run's two optional wrappers, kept out of pipeline.py: which questions this shard
asks (``--shard I/N``), and the retrieval cache around the runner (``--cache DIR``)."""

from __future__ import annotations


def part_questions(questions, shard) -> tuple[list[int] | None, list]:
    """(gold-set positions or None, the questions to ask): all of them without a shard."""
    if shard is None:
        return None, list(questions)
    from ci_eval.core.artefact.shard import select

    chosen = select(questions, shard)
    return [i for i, _ in chosen], [q for _, q in chosen]


def _index_version(inputs) -> str | None:
    return inputs.manifest.version if inputs.manifest else inputs.config.index_version


def open_cache(inputs, cache_dir: str | None):
    """The retrieval cache of ``--cache DIR`` or ``[retriever] cache``; None when off.
    ``cache_dir`` "" is the action's ``cache`` input left empty: the action restores and
    saves only the folder that input names, so a ``[retriever] cache`` would be filled and
    thrown away with the runner. It is not used, and the run says why."""
    configured = inputs.config.retriever.cache
    if cache_dir == "" and configured:
        import sys

        print(f"ci-eval: warning: {inputs.config.source}: [retriever] cache = {configured!r} is not used: "
              "the action keeps a retrieval cache between runs only when its `cache` input names the "
              f"folder (cache: {configured}); every question is asked", file=sys.stderr)
        return None
    folder = cache_dir or configured
    if not folder:
        return None
    from ci_eval.retrieval.cache import RetrievalCache
    from ci_eval.retrieval.code_print import fingerprint

    source = "--cache" if cache_dir else f"{inputs.config.source}:retriever.cache"
    return RetrievalCache(folder, inputs.config.as_recorded()["retriever"], _index_version(inputs), source,
                          depth=inputs.config.retriever.depth,
                          known_ids=inputs.manifest.ids if inputs.manifest else None,
                          code=fingerprint(inputs.config))
