"""Retriever type ``langchain``: a ``BaseRetriever``, a ``VectorStore``, or a function
returning one. langchain-core is imported only when this type is used.

Scores: a vector store's relevance-score search (similarities in [0, 1]) when it has one;
with ``score = "distance"`` its raw ``similarity_search_with_score``, negated; otherwise the
store's or retriever's own order, as rank-derived scores (retrievers drop scores)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from ci_eval.core.results import Retrieved
from ci_eval.retrieval.extract import ranked
from ci_eval.retrieval.framework import require, resolve_target, run_search
from ci_eval.retrieval.query import Query


def _store_search(store, id_from: str, score: str, fixed: dict) -> Callable:
    relevance = {"available": True}  # flipped once when the store has no relevance function

    def search(question: str, depth: int, **params) -> list:
        kwargs = {**fixed, **params}
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


def _retriever_search(retriever, id_from: str, score: str) -> Callable:
    def search(question: str, depth: int, **params) -> list:
        docs = retriever.invoke(question, **params)[:depth]
        return ranked(((doc, None) for doc in docs), id_from, score)

    return search


def searcher(obj, id_from: str, score: str) -> Callable:
    from langchain_core.vectorstores import VectorStore, VectorStoreRetriever

    # A plain similarity retriever over a store: ask the store itself, for depth and scores.
    if isinstance(obj, VectorStoreRetriever) and obj.search_type == "similarity":
        fixed = {k: v for k, v in obj.search_kwargs.items() if k != "k"}
        return _store_search(obj.vectorstore, id_from, score, fixed)
    if isinstance(obj, VectorStore):
        return _store_search(obj, id_from, score, {})
    return _retriever_search(obj, id_from, score)


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    require("langchain_core", "langchain-core", config)
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import VectorStore

    obj = resolve_target(config, lambda o: isinstance(o, (BaseRetriever, VectorStore)),
                         "a LangChain BaseRetriever or VectorStore")
    r = config.retriever
    return run_search(config, searcher(obj, r.id_from, r.score), queries, known_ids)
