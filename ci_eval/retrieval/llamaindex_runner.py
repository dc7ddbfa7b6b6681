"""Retriever type ``llamaindex``: a ``BaseRetriever``, an index (its ``as_retriever``), or a
function returning one; results are ``NodeWithScore``s. llama-index-core is imported only
when this type is used."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ci_eval.core.results import Retrieved
from ci_eval.retrieval.extract import ranked
from ci_eval.retrieval.framework import require, resolve_target, run_search
from ci_eval.retrieval.query import Query


def as_retriever(obj, depth: int, params: dict):
    """The retriever to ask, returning at least ``depth`` nodes where it can be told to.
    ``params`` go to ``as_retriever`` for an index (they are its options, e.g. filters)."""
    from llama_index.core.base.base_retriever import BaseRetriever

    if not isinstance(obj, BaseRetriever):
        return obj.as_retriever(**{"similarity_top_k": depth, **params})
    if isinstance(getattr(obj, "similarity_top_k", None), int) and obj.similarity_top_k < depth:
        obj.similarity_top_k = depth
    return obj


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    require("llama_index.core", "llama-index-core", config)
    from llama_index.core.base.base_retriever import BaseRetriever

    obj = resolve_target(config, lambda o: isinstance(o, BaseRetriever) or hasattr(o, "as_retriever"),
                         "a LlamaIndex BaseRetriever or index")
    r = config.retriever
    retriever = as_retriever(obj, r.depth, r.params)

    def search(question: str, depth: int, **_params) -> list:
        nodes = retriever.retrieve(question)[:depth]
        return ranked(((n, getattr(n, "score", None)) for n in nodes), r.id_from, r.score)

    return run_search(config, search, queries, known_ids)
