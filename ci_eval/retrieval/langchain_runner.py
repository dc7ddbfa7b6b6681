"""Retriever type ``langchain``: a ``BaseRetriever``, a ``VectorStore``, or a function
returning one. langchain-core is imported only when this type is used.

Scores: a vector store's relevance-score search (similarities in [0, 1]) when it has one;
with ``score = "distance"`` its raw ``similarity_search_with_score``, negated; otherwise the
store's or retriever's own order, as rank-derived scores (retrievers drop scores).

Depth and params: a store is asked for ``k = depth`` with the params as keyword arguments of
its search; a retriever is copied with its own knob set to the depth (``search_kwargs["k"]``
of a store's retriever, else its ``k`` field) and the params as its fields or as ``invoke``
arguments it takes. A param it would not receive, or ``k`` itself, is refused (exit 2).

A ``ContextualCompressionRetriever`` (any retriever with a ``base_retriever`` and a
``base_compressor``, from ``langchain`` or ``langchain_classic``) is asked through its base
retriever, whose documents are the stage ``base_retriever``; the compressor's output is the
final list. Its base retriever is asked for the run's depth, or a deeper ``[[stages]]``
``base_retriever`` depth."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from ci_eval.core.artefact.results import Retrieved
from ci_eval.errors import InputError
from ci_eval.retrieval.extract import ranked
from ci_eval.retrieval.framework import depth_knob, keywords_of, refuse_params, require, resolve_target, run_search
from ci_eval.retrieval.query import Query


def _store_search(store, id_from: str, score: str, fixed: dict) -> Callable:
    relevance = {"available": True}  # flipped once when the store has no relevance function

    def search(question: str, depth: int, **_given) -> list:
        kwargs = dict(fixed)  # the params, bound and checked once
        if score == "distance":
            return ranked(store.similarity_search_with_score(question, k=depth, **kwargs), id_from, score)
        if relevance["available"]:
            try:
                found = store.similarity_search_with_relevance_scores(question, k=depth, **kwargs)
                return ranked(found, id_from, score)
            except NotImplementedError:
                relevance["available"] = False
        return ranked(((doc, None) for doc in store.similarity_search(question, k=depth, **kwargs)), id_from, score)

    return search


def _retriever_search(retriever, id_from: str, score: str, kwargs: dict) -> Callable:
    def search(question: str, depth: int, **_given) -> list:
        docs = retriever.invoke(question, **kwargs)[:depth]
        return ranked(((doc, None) for doc in docs), id_from, score)

    return search


def _store_params(store, params: dict) -> dict[str, str]:
    """Params go to the store's search as keyword arguments: refused when its search names
    none of them and takes no others."""
    named, any_other = keywords_of(store.similarity_search)
    return {name: f"is not an argument of {type(store).__name__}.similarity_search "
                  f"(it takes {', '.join(sorted(named - {'query', 'k'})) or 'none'})"
            for name in params if name not in named and not any_other}


def _asked_for_depth(retriever, depth: int, params: dict) -> tuple[object, dict, dict[str, str]]:
    """A copy of ``retriever`` asked for ``depth`` results through its own knob (a store
    retriever's ``search_kwargs["k"]``, else a ``k`` field as BM25Retriever and most others
    have), its params set as fields or passed to ``invoke``; and the params it would ignore.
    LangChain drops ``invoke``'s keyword arguments in silence for a retriever whose
    ``_get_relevant_documents`` takes none."""
    from langchain_core.vectorstores import VectorStoreRetriever

    if isinstance(retriever, VectorStoreRetriever):  # its invoke merges them into search_kwargs
        wanted = {**retriever.search_kwargs, "k": depth}
        if retriever.search_type == "mmr":  # mmr picks k of fetch_k: fetch at least the depth
            wanted["fetch_k"] = max(wanted.get("fetch_k", 20), depth)
        return retriever.model_copy(update={"search_kwargs": wanted}), dict(params), {}
    fields = set(type(retriever).model_fields)
    update = {"k": depth} if "k" in fields else {}
    update.update({n: v for n, v in params.items() if n in fields})
    passed = {n: v for n, v in params.items() if n not in fields}
    refused = {} if retriever._expects_other_args else {
        n: f"is neither a field of {type(retriever).__name__} nor an argument its "
           f"_get_relevant_documents takes, so LangChain would drop it (fields: {', '.join(sorted(fields))})"
        for n in passed}
    return retriever.model_copy(update=update), passed, refused


BASE_STAGE = "base_retriever"


def _is_compression(obj) -> bool:
    from langchain_core.retrievers import BaseRetriever

    return isinstance(getattr(obj, "base_retriever", None), BaseRetriever) and hasattr(
        getattr(obj, "base_compressor", None), "compress_documents")


def _compression_search(obj, config, params: dict, refused: dict) -> Callable:
    """The base retriever asked for its depth, its documents compressed as the retriever
    would: ``base_retriever`` a stage when ``[[stages]]`` names it (no other name is one)."""
    from ci_eval.core.measure.stages import FINAL

    r = config.retriever
    named = [s for s in config.stages if s.chars is None and s.name != FINAL]
    for spec in named:
        if spec.name != BASE_STAGE:
            raise InputError(f"stage {spec.name!r} is not a stage of a {type(obj).__name__}: its stage is "
                             f"{BASE_STAGE!r} (the compressor's output is the final list)", config.source, "stages")
    pool = max([r.depth, *(s.depth for s in named if s.depth is not None)])
    base, passed, ignored = _asked_for_depth(obj.base_retriever, pool, params)
    refuse_params(config, refused | ignored)
    compressor = obj.base_compressor

    def search(question: str, depth: int, **_given):
        docs = base.invoke(question, **passed)
        final = ranked(((doc, None) for doc in compressor.compress_documents(docs, question)[:depth]),
                       r.id_from, r.score)
        if not named:
            return final
        return {"stages": {BASE_STAGE: ranked(((doc, None) for doc in docs), r.id_from, r.score)}, "results": final}

    return search


def searcher(obj, config) -> Callable:
    """How ``obj`` is asked for ``config``'s depth with its params; params it would not
    receive are refused (exit 2) before any question is asked."""
    from langchain_core.vectorstores import VectorStore, VectorStoreRetriever

    r = config.retriever
    refused = depth_knob(config, "k")
    params = {n: v for n, v in r.params.items() if n not in refused}
    # A plain similarity retriever over a store: ask the store itself, for depth and scores.
    if isinstance(obj, VectorStoreRetriever) and obj.search_type == "similarity":
        fixed = {**{k: v for k, v in obj.search_kwargs.items() if k != "k"}, **params}
        refuse_params(config, refused | _store_params(obj.vectorstore, params))
        return _store_search(obj.vectorstore, r.id_from, r.score, fixed)
    if isinstance(obj, VectorStore):
        refuse_params(config, refused | _store_params(obj, params))
        return _store_search(obj, r.id_from, r.score, params)
    if _is_compression(obj):
        return _compression_search(obj, config, params, refused)
    retriever, passed, ignored = _asked_for_depth(obj, r.depth, params)
    refuse_params(config, refused | ignored)
    return _retriever_search(retriever, r.id_from, r.score, passed)


def prepare(config) -> Callable:
    """The object ``target`` names (built by its factory), checked and ready to ask: what
    `run` does before the first question, and what `check` does in its place."""
    require("langchain_core", "langchain-core", config)
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import VectorStore

    obj = resolve_target(config, lambda o: isinstance(o, (BaseRetriever, VectorStore)),
                         "a LangChain BaseRetriever or VectorStore")
    return searcher(obj, config)


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    return run_search(config, prepare(config), queries, known_ids)
