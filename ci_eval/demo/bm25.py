"""Okapi BM25 on numpy, small enough to read in one sitting.

Score of document d for query q, summed over the distinct query terms t present in d::

    idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score    = idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

``idf`` is the "+1 inside the log" variant (Lucene's), which never goes negative, so a
term in more than half of the documents still counts a little instead of pushing its
documents down. With ``title_boost`` = w a document's title counts as w extra copies of
its text: ``tf = tf_body + w * tf_title`` and ``dl = len_body + w * len_title`` (w = 0
ignores titles; fractional weights are allowed).

Each distinct query term counts once, whatever its repetition in the query: questions are
short and repeating a word in one is rarely a statement of importance.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

_TOKEN = re.compile(r"[a-z0-9]+")

# Function words that carry no topic in a question about a language reference. Words that
# are Python keywords ("if", "for", "in", "is", "not", "and", "or", "with", "as", "from",
# "return", "else", "while", "del", "pass", "global") are deliberately NOT here: users ask
# about exactly those.
_STOPWORD_TEXT = """
    a an the this that these those it its of on at by to into onto than then there
    be been being am are was were do does did doing done have has had having
    i me my we our you your he she they them their what which who whom whose when where
    why how can could should would will shall may might must
    about after before again all any both each few more most other some such only own
    same so too very just also but nor out off over under up down here
    s t don doesn isn
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def stem(token: str) -> str:
    """A light, conservative suffix stripper (plurals, -ing, -ed, -ly).

    Deliberately weaker than Porter: it only folds inflections a reader would call "the
    same word" (``arguments`` -> ``argument``, ``evaluated`` -> ``evaluat``, ``classes``
    -> ``class``), and leaves short words and Python-ish tokens such as ``__slots__``
    parts alone by requiring a minimum stem length.
    """
    if len(token) <= 3 or token.isdigit():
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "shes", "ches", "xes")):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    if token.endswith("ing") and len(token) > 5:
        return token[:-3]
    if token.endswith("ed") and len(token) > 4:
        return token[:-2]
    if token.endswith("ly") and len(token) > 4:
        return token[:-2]
    return token


def tokenize(text: str, *, stopwords: bool = False, stemming: bool = False) -> list[str]:
    """Lowercase, split on anything not ``[a-z0-9]``, optionally drop stopwords and stem."""
    tokens = _TOKEN.findall(text.lower())
    if stopwords:
        tokens = [t for t in tokens if t not in STOPWORDS]
    if stemming:
        tokens = [stem(t) for t in tokens]
    return tokens


@dataclass(frozen=True)
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    title_boost: float = 0.0
    stopwords: bool = False
    stem: bool = False

    def __post_init__(self) -> None:
        if not (self.k1 >= 0 and math.isfinite(self.k1)):
            raise ValueError(f"k1 must be a finite number >= 0, got {self.k1!r}")
        if not 0 <= self.b <= 1:
            raise ValueError(f"b must be between 0 and 1, got {self.b!r}")
        if not (self.title_boost >= 0 and math.isfinite(self.title_boost)):
            raise ValueError(f"title_boost must be a finite number >= 0, got {self.title_boost!r}")


class BM25Index:
    """Built once from (id, title, text) documents; ``search`` is a few numpy adds.

    Postings hold, per term, the document indices and the term's precomputed score
    contribution in each, so a query costs one gather-and-add per query term.
    """

    def __init__(self, docs: Sequence[tuple[str, str, str]], params: BM25Params | None = None):
        self.params = params or BM25Params()
        p = self.params
        self.ids: tuple[str, ...] = tuple(doc_id for doc_id, _, _ in docs)
        if len(set(self.ids)) != len(self.ids):
            raise ValueError("document ids must be unique")
        n = len(docs)
        tfs: list[Counter[str]] = []
        lengths = np.zeros(n, dtype=np.float64)
        for i, (_, title, text) in enumerate(docs):
            tf = Counter(self._tokens(text))  # counts; with a title, plus w * its counts
            length = float(sum(tf.values()))
            if p.title_boost:
                head = Counter(self._tokens(title))
                for t, c in head.items():
                    tf[t] += p.title_boost * c
                length += p.title_boost * sum(head.values())
            tfs.append(tf)
            lengths[i] = length
        self.doc_lengths = lengths
        self.avgdl = float(lengths.mean()) if n and lengths.sum() > 0 else 1.0

        # Every (document, term) pair once, then ordered by term and, within a term, by
        # document: each term's postings are slices of two flat arrays. (Built with a list
        # per term, appended to pair by pair, the sweep benchmark's 4-gram index of 18,891
        # Vaswani chunks took 2.2 s; this way, 1.3 s, with the same arrays to the bit.)
        vocab: dict[str, int] = {}
        pair_term: list[int] = []
        pair_tf: list[float] = []
        per_doc = np.fromiter((len(tf) for tf in tfs), dtype=np.intp, count=n)
        for tf in tfs:
            pair_term += [vocab.setdefault(term, len(vocab)) for term in tf]
            pair_tf += tf.values()
        terms = np.asarray(pair_term, dtype=np.intp)
        pair_doc = np.repeat(np.arange(n, dtype=np.intp), per_doc)
        order = np.lexsort((pair_doc, terms))
        pair_doc, tf_arr = pair_doc[order], np.asarray(pair_tf, dtype=np.float64)[order]
        df = np.bincount(terms, minlength=len(vocab))
        ends = np.cumsum(df)
        norm = p.k1 * (1.0 - p.b + p.b * lengths / self.avgdl)
        # math.log per term, as the formula above is written (np.log may differ in the last bit)
        self.idf: dict[str, float] = {term: math.log(1.0 + (n - int(df[t]) + 0.5) / (int(df[t]) + 0.5))
                                      for term, t in vocab.items()}
        pair_idf = np.repeat(np.fromiter(self.idf.values(), dtype=np.float64, count=len(vocab)), df)
        contrib = pair_idf * tf_arr * (p.k1 + 1.0) / (tf_arr + norm[pair_doc])
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {
            term: (pair_doc[ends[t] - df[t]:ends[t]], contrib[ends[t] - df[t]:ends[t]]) for term, t in vocab.items()}
        # Ties broken by id descending, the order the evaluation itself uses; precomputing
        # each id's rank in that order turns the tie-break into one integer key.
        order = sorted(range(n), key=lambda i: self.ids[i].encode("utf-8"), reverse=True)
        self._tie_rank = np.empty(n, dtype=np.intp)
        self._tie_rank[order] = np.arange(n)

    def _tokens(self, text: str) -> list[str]:
        return tokenize(text, stopwords=self.params.stopwords, stemming=self.params.stem)

    def query_terms(self, question: str) -> list[str]:
        # Sorted, so the float additions run in the same order whatever the hash seed.
        return sorted(set(self._tokens(question)))

    def scores(self, question: str) -> np.ndarray:
        """Score of every document, in document order."""
        total = np.zeros(len(self.ids), dtype=np.float64)
        for term in self.query_terms(question):
            hit = self.postings.get(term)
            if hit is not None:
                idx, contrib = hit
                total[idx] += contrib  # indices are unique within one term's postings
        return total

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        """Top ``k`` (id, score) pairs with a positive score, best first."""
        if k <= 0:
            return []
        total = self.scores(question)
        matched = np.flatnonzero(total > 0.0)
        # lexsort's last key is the primary one: score descending, then id descending.
        order = matched[np.lexsort((self._tie_rank[matched], -total[matched]))][:k]
        return [(self.ids[i], float(total[i])) for i in order]


def build(docs: Iterable[tuple[str, str, str]], params: BM25Params | None = None) -> BM25Index:
    return BM25Index(list(docs), params)
