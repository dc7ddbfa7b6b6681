"""The retriever the demo configs point at: ``ci_eval.demo.retriever:search``.

``params`` from the config's ``[retriever]`` table select the BM25 configuration; one
index is built per distinct parameter set and kept for the life of the process, because
the evaluation calls ``search`` once per question (possibly from several threads).
"""

from __future__ import annotations

import threading
from typing import Any

from ci_eval.demo.bm25 import BM25Index, BM25Params
from ci_eval.demo.corpus import index_version, load_chunks

_PARAM_NAMES = ("k1", "b", "title_boost", "stopwords", "stem", "corpus")
_CORPORA = ("pydoc-topics", "reingested")
_indexes: dict[tuple[tuple[str, Any], ...], BM25Index] = {}
_lock = threading.Lock()


def _params(params: dict[str, Any]) -> BM25Params:
    unknown = sorted(set(params) - set(_PARAM_NAMES))
    if unknown:
        raise TypeError(
            f"unknown retriever params {', '.join(unknown)}; expected some of "
            f"{', '.join(_PARAM_NAMES)}"
        )
    values: dict[str, Any] = {}
    for name in ("k1", "b", "title_boost"):
        if name in params:
            value = params[name]
            # bool is an int subclass; "title_boost = true" is a typo, not a weight.
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"retriever param {name} must be a number, got {value!r}")
            values[name] = float(value)
    for name in ("stopwords", "stem"):
        if name in params:
            if not isinstance(params[name], bool):
                raise TypeError(
                    f"retriever param {name} must be true or false, got {params[name]!r}"
                )
            values[name] = params[name]
    return BM25Params(**values)


def _chunks(corpus: str):
    if corpus not in _CORPORA:
        raise TypeError(f"retriever param corpus must be one of {', '.join(_CORPORA)}, got {corpus!r}")
    if corpus == "reingested":
        from ci_eval.demo.reingest import reingested_chunks

        return reingested_chunks()
    return load_chunks()


def index_for(**params: Any) -> BM25Index:
    """The built index for these params (built on first use, then cached). ``corpus``
    picks the chunks: the pydoc topics as chunked by heading, or the head's re-ingestion."""
    corpus = params.pop("corpus", "pydoc-topics")
    chunks = _chunks(corpus)
    config = _params(params)
    # Keyed by the normalised params so {"k1": 1} and {"k1": 1.0} share one index.
    key = (corpus, *sorted(vars(config).items()))
    index = _indexes.get(key)
    if index is None:
        with _lock:
            index = _indexes.get(key)
            if index is None:
                docs = [(c.id, c.title, c.text) for c in chunks]
                index = BM25Index(docs, config)
                _indexes[key] = index
    return index


def search(question: str, k: int, **params: Any) -> list[tuple[str, float]]:
    """Top ``k`` (chunk id, BM25 score) pairs for ``question``, best first.

    Chunks with no query term in common are never returned, so an off-topic question can
    come back with fewer than ``k`` results, or none.
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    return index_for(**params).search(question, k)


def manifest() -> dict[str, Any]:
    """The index manifest: its version and every chunk, with its topic, span and text."""
    from ci_eval.demo.reingest import manifest_entries

    return {"version": index_version(), "chunks": manifest_entries(load_chunks())}


def reingested_manifest() -> dict[str, Any]:
    """The head's index after the re-ingestion (see ci_eval.demo.reingest)."""
    from ci_eval.demo.reingest import manifest_entries, reingested_chunks, reingested_version

    return {"version": reingested_version(), "chunks": manifest_entries(reingested_chunks())}


def texts(ids: list[str]) -> dict[str, str]:
    """Chunk texts by id, for ``ci-eval label --chunks ci_eval.demo.retriever:texts``."""
    from ci_eval.demo.reingest import reingested_chunks

    # Both indexes: the head's re-ingested sections are labelled like any other chunk.
    by_id = {c.id: f"{c.title}\n\n{c.text}" for chunks in (load_chunks(), reingested_chunks()) for c in chunks}
    return {i: by_id[i] for i in ids if i in by_id}
