"""The benchmark's retriever (benchmarks/bench_sweep.py): BM25 over a manifest's chunks,
alone or fused by reciprocal rank with a second BM25 over another tokenisation.

Called by `ci-eval sweep` as ``search(question, depth, manifest=..., fusion=...)``; each
manifest's indexes are built once per process, on first use (the 4-gram one only for a
fused configuration: it takes three times the word index's build).
"""

from __future__ import annotations

import json
import threading

from ci_eval.demo.bm25 import BM25Index, BM25Params, tokenize

RRF_K = 60  # Cormack et al. (2009): 1 / (60 + rank), the constant of the original paper
FUSED_DEPTH = 200  # each list's top this many enter the fusion
_BUILT: dict = {}
_LOCK = threading.Lock()


class GramIndex(BM25Index):
    """BM25 over character 4-grams of each word (the word itself when shorter): a second
    tokenisation that matches inflections and compounds the word index misses."""

    def _tokens(self, text: str) -> list[str]:
        grams = []
        for word in tokenize(text):
            grams += [word[i:i + 4] for i in range(len(word) - 3)] or [word]
        return grams


def _chunks(path: str) -> list[tuple[str, str, str]]:
    with open(path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return [(e["id"], "", e["text"]) for e in lines if "id" in e]


def _index(path: str, kind: str) -> BM25Index:
    with _LOCK:
        if (path, kind) not in _BUILT:
            chunks = _chunks(path)
            _BUILT[path, kind] = (GramIndex(chunks) if kind == "grams"
                                  else BM25Index(chunks, BM25Params(stem=True, stopwords=True)))
        return _BUILT[path, kind]


def fuse(lists: list[list[tuple[str, float]]], depth: int) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: each id scores the sum of 1 / (RRF_K + rank) over the lists
    it is in; ties by id descending, the evaluation's own order."""
    scores: dict[str, float] = {}
    for ranked in lists:
        for rank, (cid, _) in enumerate(ranked, 1):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (RRF_K + rank)
    ordered = sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)
    return ordered[:depth]


def search(question: str, depth: int, manifest: str, fusion: str = "none", lose: str = ""):
    words = _index(manifest, "words")
    if fusion == "rrf":
        grams = _index(manifest, "grams")
        found = fuse([words.search(question, FUSED_DEPTH), grams.search(question, FUSED_DEPTH)], depth)
    else:
        found = words.search(question, depth + 50)
    if lose:
        # the planted loss of evidence (bench_sweep.py --lose): these chunks are never found
        # for these questions, as if the re-chunk had cut their evidence away
        hidden = _lost(lose).get(question, ())
        found = [pair for pair in found if pair[0] not in hidden]
    return found[:depth]


def _lost(path: str) -> dict:
    with _LOCK:
        if path not in _BUILT:
            with open(path, encoding="utf-8") as f:
                _BUILT[path] = {q: frozenset(ids) for q, ids in json.load(f).items()}
        return _BUILT[path]
