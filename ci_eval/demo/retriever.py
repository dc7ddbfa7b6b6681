"""The retriever the demo configs point at: ``ci_eval.demo.retriever:search``.

``params`` from the config's ``[retriever]`` table select the BM25 configuration; one
index is built per distinct parameter set and kept for the life of the process, because
the evaluation calls ``search`` once per question (possibly from several threads).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ci_eval.demo.bm25 import BM25Index, BM25Params
from ci_eval.demo.corpus import index_version, load_chunks

_PARAM_NAMES = ("k1", "b", "title_boost", "stopwords", "stem", "corpus", "rerank", "pool", "chunking", "fusion")
_CORPORA = ("pydoc-topics", "reingested")
# How the topics are cut: on their headings, or into fixed windows of that many characters
# (the ladder of chunkings the demo's sweep starts from)
_CHUNKINGS = {"headings": None, "window-512": 512}
_FUSIONS = ("none", "rrf")
RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al., 2009)
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


def _chunks(corpus: str, chunking: str = "headings"):
    if chunking not in _CHUNKINGS:
        raise TypeError(f"retriever param chunking must be one of {', '.join(_CHUNKINGS)}, got {chunking!r}")
    if _CHUNKINGS[chunking] is not None:
        from ci_eval.demo.corpus import load_windows

        return load_windows(_CHUNKINGS[chunking])
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
    chunking = params.pop("chunking", "headings")
    chunks = _chunks(corpus, chunking)
    config = _params(params)
    # Keyed by the normalised params so {"k1": 1} and {"k1": 1.0} share one index.
    key = (corpus, chunking, *sorted(vars(config).items()))
    index = _indexes.get(key)
    if index is None:
        with _lock:
            index = _indexes.get(key)
            if index is None:
                docs = [(c.id, c.title, c.text) for c in chunks]
                index = BM25Index(docs, config)
                _indexes[key] = index
    return index


def _reranked(index: BM25Index, question: str, pool: list[tuple[str, float]], weight: float):
    """The pool re-scored by how many of the question's terms each chunk holds: BM25 x (1 +
    ``weight`` x the share of query terms present), best first (ties: id descending, as
    everywhere). A stand-in for a cross-encoder: deterministic, and it changes a few ranks."""
    terms = [t for t in index.query_terms(question) if t in index.postings]
    at = {cid: i for i, cid in enumerate(index.ids)}
    rows = np.fromiter((at[cid] for cid, _ in pool), dtype=np.intp, count=len(pool))
    held = sum((np.isin(rows, index.postings[t][0]) for t in terms), np.zeros(len(pool)))
    share = held / max(1, len(index.query_terms(question)))
    scored = [(cid, score * (1.0 + weight * float(c))) for (cid, score), c in zip(pool, share)]
    by_id = sorted(scored, key=lambda pair: pair[0].encode("utf-8"), reverse=True)
    return sorted(by_id, key=lambda pair: -pair[1])  # stable: equal scores stay id descending


def _stage_params(params: dict[str, Any]) -> tuple[float, int]:
    weight, depth = params.pop("rerank", 0.0), params.pop("pool", 50)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
        raise TypeError(f"retriever param rerank must be a weight >= 0, got {weight!r}")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise TypeError(f"retriever param pool must be a whole number >= 1, got {depth!r}")
    return float(weight), depth


def _fused(question: str, depth: int, params: dict[str, Any]) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of the configured BM25 and a second lexical ranker that keeps
    words as written (no stemming, stopwords kept, titles not boosted: exact identifiers
    such as ``__enter__`` count as they are): each id scores the sum of 1 / (RRF_K + rank)
    over the two lists' top ``depth``, best first (ties: id descending)."""
    literal = {**params, "stem": False, "stopwords": False, "title_boost": 0.0}
    scores: dict[str, float] = {}
    for ranking in (index_for(**params).search(question, depth), index_for(**literal).search(question, depth)):
        for rank, (cid, _) in enumerate(ranking, 1):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (RRF_K + rank)
    by_id = sorted(scores.items(), key=lambda pair: pair[0].encode("utf-8"), reverse=True)
    return sorted(by_id, key=lambda pair: -pair[1])[:depth]


def search(question: str, k: int, **params: Any):
    """Top ``k`` (chunk id, BM25 score) pairs for ``question``, best first.

    Chunks with no query term in common are never returned, so an off-topic question can
    come back with fewer than ``k`` results, or none. ``chunking`` picks how the topics are
    cut (``headings`` or ``window-512``), ``fusion = "rrf"`` fuses BM25 with a ranker of the
    words as written (``_fused``). With ``rerank = W`` the answer has
    stages: BM25's top ``pool`` (50 unless set) and that pool reranked (``_reranked``),
    whose top ``k`` is the final list.
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    weight, depth = _stage_params(params)
    fusion = params.pop("fusion", "none")
    if fusion not in _FUSIONS:
        raise TypeError(f"retriever param fusion must be one of {', '.join(_FUSIONS)}, got {fusion!r}")
    index = index_for(**params)
    ranked = _fused(question, max(depth, k), params) if fusion == "rrf" else None
    if not weight:
        return ranked[:k] if ranked is not None else index.search(question, k)
    pool = ranked[:max(depth, k)] if ranked is not None else index.search(question, max(depth, k))
    reranked = _reranked(index, question, pool, weight)
    return {"stages": {"pool": pool, "rerank": reranked}, "results": reranked[:k]}


def manifest(chunking: str = "headings") -> dict[str, Any]:
    """The index manifest: its version and every chunk, with its topic, span and text; the
    topics cut by ``chunking`` (the ``[index] params`` of the demo's ladder)."""
    from ci_eval.demo.corpus import _python_version, version_of
    from ci_eval.demo.reingest import manifest_entries

    if chunking == "headings":
        return {"version": index_version(), "chunks": manifest_entries(load_chunks())}
    chunks = _chunks("pydoc-topics", chunking)
    return {"version": f"{version_of(chunks, _python_version())}-{chunking}", "chunks": manifest_entries(chunks)}


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
