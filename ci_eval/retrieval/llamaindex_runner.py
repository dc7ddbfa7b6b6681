"""Retriever type ``llamaindex``: a ``BaseRetriever``, an index (its ``as_retriever``), a
``RetrieverQueryEngine``, or a function returning one; results are ``NodeWithScore``s.
llama-index-core is imported only when this type is used.

A query engine is asked as its ``retrieve`` asks: its retriever, then its node
postprocessors in order (no model is called). Its stages are ``retriever`` and each
postprocessor by its class name (``SimilarityPostprocessor``, a reranker's), the nodes after
it; a ``[[stages]]`` name that is neither is refused (docs/stages.md).

The depth is asked through ``similarity_top_k`` (given to an index's ``as_retriever``, raised
on a retriever that has a lower one); ``params`` are ``as_retriever``'s other arguments. A
param the retriever would not take, ``similarity_top_k`` itself, or any param with a
retriever already built, is refused (exit 2)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from ci_eval.core.artefact.results import Retrieved
from ci_eval.core.text import one_line
from ci_eval.errors import InputError
from ci_eval.retrieval.extract import ranked
from ci_eval.retrieval.framework import depth_knob, keywords_of, refuse_params, require, resolve_target, run_search
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


def _ignored(obj, built, params: dict) -> dict[str, str]:
    """The params the retriever would not receive. A retriever object takes none (they are
    options of an index's ``as_retriever``); an index's retriever takes the arguments its
    class names, and LlamaIndex's ``**kwargs`` swallow any other in silence."""
    from llama_index.core.base.base_retriever import BaseRetriever

    if isinstance(obj, BaseRetriever):
        return {name: f"cannot reach {type(obj).__name__}, a retriever already built: params go to an "
                      "index's as_retriever, so give the index (or a function returning it) as the target"
                for name in params}
    named, _ = keywords_of(type(built).__init__)
    return {name: f"is not an argument of {type(built).__name__} (it takes "
                  f"{', '.join(sorted(named - {'self', 'index', 'similarity_top_k'}))})"
            for name in params if name not in named}


def _stage_names(postprocessors, config) -> list[str]:
    """The ``[[stages]]`` read from the answer: ``retriever`` or a postprocessor's class name;
    any other is bad input at its place."""
    from ci_eval.core.measure.stages import FINAL

    offered = ["retriever", *dict.fromkeys(type(p).__name__ for p in postprocessors)]
    named = [s.name for s in config.stages if s.chars is None and s.name != FINAL]
    for name in named:
        if name not in offered:
            raise InputError(f"stage {name!r} is neither the query engine's retriever nor one of its node "
                             f"postprocessors (they are: {', '.join(offered)})", config.source, "stages")
    return named


def prepare(config) -> Callable:
    """The object ``target`` names (built by its factory), checked and ready to ask: what
    `run` does before the first question, and what `check` does in its place."""
    require("llama_index.core", "llama-index-core", config)
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.schema import QueryBundle

    obj = resolve_target(config, lambda o: isinstance(o, (BaseRetriever, RetrieverQueryEngine))
                         or hasattr(o, "as_retriever"), "a LlamaIndex BaseRetriever, index or RetrieverQueryEngine")
    postprocessors: list = []
    if isinstance(obj, RetrieverQueryEngine):
        # LlamaIndex keeps them private; retrieve() applies them in this order
        obj, postprocessors = obj.retriever, list(obj._node_postprocessors)
    staged = _stage_names(postprocessors, config) if postprocessors else []
    r = config.retriever
    refused = depth_knob(config, "similarity_top_k")
    params = {n: v for n, v in r.params.items() if n not in refused}
    if isinstance(obj, BaseRetriever):
        refuse_params(config, refused | _ignored(obj, obj, params))
    try:
        retriever = as_retriever(obj, r.depth, params)
    except TypeError as exc:  # e.g. node_ids, which as_retriever sets itself
        raise InputError(f"{type(obj).__name__}.as_retriever refused the params: {one_line(exc, 200)}",
                         config.source, "retriever.params") from None
    refuse_params(config, refused | _ignored(obj, retriever, params))

    def ranked_nodes(nodes) -> list:
        return ranked(((n, getattr(n, "score", None)) for n in nodes), r.id_from, r.score)

    def search(question: str, depth: int, **_given):  # the params went to as_retriever
        asked = QueryBundle(question)
        nodes = retriever.retrieve(asked)
        lists = {"retriever": nodes}
        for post in postprocessors:
            nodes = post.postprocess_nodes(nodes, query_bundle=asked)
            lists.setdefault(type(post).__name__, nodes)
        final = ranked_nodes(nodes[:depth])
        if not staged:
            return final
        return {"stages": {name: ranked_nodes(lists[name]) for name in staged}, "results": final}

    return search


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    return run_search(config, prepare(config), queries, known_ids)
