"""The run's two optional wrappers, kept out of pipeline.py: which questions this shard
asks (``--shard I/N``), and the retrieval cache around the runner (``--cache DIR``)."""

from __future__ import annotations


def part_questions(questions, shard) -> tuple[list[int] | None, list]:
    """(gold-set positions or None, the questions to ask): all of them without a shard."""
    if shard is None:
        return None, list(questions)
    from ci_eval.core.shard import select

    chosen = select(questions, shard)
    return [i for i, _ in chosen], [q for _, q in chosen]


def _index_version(inputs) -> str | None:
    return inputs.manifest.version if inputs.manifest else inputs.config.index_version


def open_cache(inputs, cache_dir: str | None):
    """The retrieval cache of ``--cache DIR`` or ``[retriever] cache``; None when off."""
    folder = cache_dir or inputs.config.retriever.cache
    if not folder:
        return None
    from ci_eval.retrieval.cache import RetrievalCache

    source = "--cache" if cache_dir else f"{inputs.config.source}:retriever.cache"
    return RetrievalCache(folder, inputs.config.as_recorded()["retriever"], _index_version(inputs), source,
                          depth=inputs.config.retriever.depth,
                          known_ids=inputs.manifest.ids if inputs.manifest else None)
