"""The metric registry and its numpy kernels, with trec_eval 10.0's semantics.

Users type ``hit@5``, ``recall@5``, ``precision@5``, ``ndcg@5``, ``mrr`` (or ``mrr@10``)
and ``map``, and on span gold ``evidence_recall@5`` and ``evidence_precision@5`` (measured
on document characters, core/measure/coverage.py); trec_eval's names (``success_5``,
``success.5``, ``P_5``, ``recall_5``, ``ndcg_cut_5``, ``recip_rank``) are aliases. Each family's kernel carries its convention
and formula in its docstring; ``ci-eval metrics`` and docs/metrics.md are built from them.

Conventions shared by every metric (trec_eval 10.0):

* a document is relevant when its grade is >= ``relevance_level`` (default 1);
* negative grades are never relevant, count nowhere and add no gain;
* unjudged documents are not relevant;
* ``R`` (num_rel) is the number of judged documents of the query that are relevant,
  retrieved or not;
* an empty ranking scores 0 everywhere, and so does a query with ``R = 0``.

All metrics are computed from one (queries x depth) matrix of grades built once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ci_eval.core.measure.names import Metric, resolve_metric
from ci_eval.errors import InputError

# Grade given to padding, unjudged documents and negative judgments: below any
# relevance level (levels are >= 0) and clipped to a gain of 0.
_NOT_RELEVANT = -1.0


# --------------------------------------------------------------------------- the table


class GradeTable:
    """Per-query grades of the ranked documents plus what the ideal ranking needs.

    Only the ranked documents judged 0 or more are kept ("hits"): ``ranks[q, j]`` is the
    0-based rank and ``gains[q, j]`` the grade of query q's j-th hit, by rank, the rows
    padded with rank ``depth`` and grade -1. An unjudged document or a negative judgment
    would have grade -1 (below any relevance level, no gain), so leaving it out changes
    no metric: every sum skips only zero terms and keeps its order, and the results are
    the same to the last bit as over the full (queries x depth) matrix, which ``grades``
    still gives. ``lengths[q]`` is the number retrieved, ``judged`` a (queries x m)
    matrix of each query's judged grades sorted descending (padded with -1), from which
    num_rel and the ideal DCG come.
    Derived arrays are computed once, on first use, for every metric that needs them.
    """

    def __init__(self, ranks: np.ndarray, gains: np.ndarray, lengths: np.ndarray,
                 judged: np.ndarray, relevance_level: int = 1):
        if relevance_level < 0:
            raise InputError(
                f"the relevance level must be 0 or more, got {relevance_level}",
                source="relevance_level",
            )
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.depth = int(self.lengths.max()) if len(self.lengths) else 0
        self.ranks = ranks
        self.gains = gains
        self.judged = judged
        self.level = relevance_level
        # core.measure.coverage.EvidenceTable of the same queries, when the gold names
        # evidence by document span: what the evidence families read
        self.evidence = None
        self._cache: dict = {}

    @classmethod
    def from_hits(cls, n_queries: int, query: np.ndarray, rank: np.ndarray,
                  grade: np.ndarray, lengths: np.ndarray, judged: np.ndarray,
                  relevance_level: int = 1) -> GradeTable:
        """From one (query, 0-based rank, grade) triple per ranked document judged 0 or
        more, in any order."""
        by = np.lexsort((rank, query))
        query, rank, grade = query[by], rank[by], np.asarray(grade, dtype=np.float64)[by]
        counts = np.bincount(query, minlength=n_queries)
        column = np.arange(len(query)) - (np.cumsum(counts) - counts)[query]
        width = int(counts.max()) if n_queries else 0
        lengths = np.asarray(lengths, dtype=np.int64)
        depth = int(lengths.max()) if n_queries else 0
        ranks = np.full((n_queries, width), depth, dtype=np.int64)
        gains = np.full((n_queries, width), _NOT_RELEVANT)
        ranks[query, column] = rank
        gains[query, column] = grade
        return cls(ranks, gains, lengths, judged, relevance_level)

    @classmethod
    def from_grades(cls, grades: np.ndarray, lengths: np.ndarray, judged: np.ndarray,
                    relevance_level: int = 1) -> GradeTable:
        """From the full (queries x depth) matrix of grades (-1: unjudged or padding)."""
        query, rank = np.nonzero(grades >= 0)
        return cls.from_hits(grades.shape[0], query, rank, grades[query, rank], lengths,
                             judged, relevance_level)

    @property
    def n_queries(self) -> int:
        return len(self.lengths)

    @property
    def grades(self) -> np.ndarray:
        """The full (queries x depth) matrix: -1 for unjudged, negative and padding."""
        out = np.full((self.n_queries, self.depth), _NOT_RELEVANT)
        query, column = np.nonzero(self.ranks < self.depth)
        out[query, self.ranks[query, column]] = self.gains[query, column]
        return out

    def _get(self, key: str, make: Callable[[], np.ndarray]) -> np.ndarray:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def relevant(self) -> np.ndarray:
        """Hits at or above the relevance level (padding never is: its grade is -1)."""
        return self._get("relevant", lambda: self.gains >= self.level)

    @property
    def found(self) -> np.ndarray:
        """Relevant documents up to and including each hit."""
        return self._get("found", lambda: np.cumsum(self.relevant, axis=1, dtype=np.int64))

    @property
    def num_rel(self) -> np.ndarray:
        return self._get(
            "num_rel", lambda: np.count_nonzero(self.judged >= self.level, axis=1)
        )

    @property
    def num_rel_ret(self) -> np.ndarray:
        return self.found_at(self.depth)

    def _within(self, k: int) -> np.ndarray:
        """Hits within the first k ranks, per query (hits come by rank)."""
        k = min(k, self.depth)
        return self._get(f"within{k}", lambda: np.count_nonzero(self.ranks < k, axis=1))

    def found_at(self, k: int) -> np.ndarray:
        if self.ranks.shape[1] == 0:
            return np.zeros(self.n_queries, dtype=np.int64)
        return np.count_nonzero(self.relevant & (self.ranks < min(k, self.depth)), axis=1)

    @property
    def first_rank(self) -> np.ndarray:
        """1-based rank of the first relevant document, 0 when there is none."""

        def make() -> np.ndarray:
            if self.ranks.shape[1] == 0:
                return np.zeros(self.n_queries, dtype=np.int64)
            rel = self.relevant
            first = self.ranks[np.arange(self.n_queries), np.argmax(rel, axis=1)]
            return np.where(rel.any(axis=1), first + 1, 0)

        return self._get("first_rank", make)

    def _log2(self, n: int) -> np.ndarray:
        # log2(rank + 1) for 1-based ranks 1..n, always from the same contiguous call, so a
        # rank's discount is the same number whichever ranking it came from.
        return np.log2(np.arange(2, n + 2, dtype=np.float64))

    def dcg_at(self, k: int) -> np.ndarray:
        if self.ranks.shape[1] == 0:
            return np.zeros(self.n_queries)

        def make() -> np.ndarray:
            # gain / log2(rank + 1) summed hit by hit in rank order, as trec_eval sums rank
            # by rank (the ranks in between add 0), so the floats agree to the last bit
            # where the logarithms do.
            discount = np.append(self._log2(self.depth), 1.0)[self.ranks]
            return np.cumsum(np.maximum(self.gains, 0.0) / discount, axis=1)

        dcg = self._get("dcg", make)
        within = self._within(k)
        last = np.maximum(within - 1, 0)
        return np.where(within > 0, dcg[np.arange(self.n_queries), last], 0.0)

    def ideal_dcg_at(self, k: int) -> np.ndarray:
        # The ideal ranking lists every positive judgment by grade, whatever the level.
        if self.judged.shape[1] == 0:
            return np.zeros(self.n_queries)

        def make() -> np.ndarray:
            gains = np.maximum(self.judged, 0.0)
            return np.cumsum(gains / self._log2(self.judged.shape[1]), axis=1)

        idcg = self._get("idcg", make)
        return idcg[:, min(k, self.judged.shape[1]) - 1]

    def precision_sum(self) -> np.ndarray:
        """Sum of the precision at the rank of each relevant document, in rank order."""

        def make() -> np.ndarray:
            if self.ranks.shape[1] == 0:
                return np.zeros(self.n_queries)
            at_hits = np.where(self.relevant, self.found / (self.ranks + 1.0), 0.0)
            return np.cumsum(at_hits, axis=1)[:, -1]

        return self._get("precision_sum", make)


def judged_matrix(n_queries: int, query: np.ndarray, grade: np.ndarray) -> np.ndarray:
    """Each query's judged grades sorted descending, as a (queries x m) matrix padded
    with -1; negative grades become -1 (no gain, never relevant)."""
    grade = np.asarray(grade, dtype=np.float64)
    by = np.lexsort((-grade, query))
    query, grade = query[by], grade[by]
    counts = np.bincount(query, minlength=n_queries)
    column = np.arange(len(query)) - (np.cumsum(counts) - counts)[query]
    out = np.full((n_queries, int(counts.max()) if n_queries else 0), _NOT_RELEVANT)
    out[query, column] = np.where(grade < 0, _NOT_RELEVANT, grade)
    return out


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den is 0 (trec_eval leaves those values at 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


# --------------------------------------------------------------------------- kernels


def _hit(t: GradeTable, k: int) -> np.ndarray:
    """Hit@k: 1 if at least one relevant document is in the top k, else 0.

    hit@k = 1[ |{i <= k : rel_i}| > 0 ]. Same as trec_eval's success_k (also called
    Success@k). Not to be confused with recall@k: with 3 relevant documents and 1 of
    them in the top k, hit@k = 1 but recall@k = 1/3.
    """
    return (t.found_at(k) > 0).astype(np.float64)


def _recall(t: GradeTable, k: int) -> np.ndarray:
    """Recall@k: the share of the query's relevant documents found in the top k.

    recall@k = |{i <= k : rel_i}| / R, where R counts every judged relevant document of
    the query, retrieved or not (trec_eval recall_k). 0 when R = 0.
    """
    return _ratio(t.found_at(k), t.num_rel)


def _precision(t: GradeTable, k: int) -> np.ndarray:
    """Precision@k: relevant documents in the top k, divided by k.

    precision@k = |{i <= k : rel_i}| / k, dividing by k even when fewer than k documents
    were retrieved (trec_eval P_k): a short ranking is not rewarded for being short.
    """
    return t.found_at(k) / float(k)


def _ndcg(t: GradeTable, k: int) -> np.ndarray:
    """nDCG@k: discounted cumulative gain of the top k over that of the ideal top k.

    DCG@k = sum_{i <= k} g_i / log2(i + 1), with g_i the raw grade of the document at
    rank i (0 when unjudged or negative), whatever the relevance level.
    IDCG@k is the same sum over the query's positive judgments sorted by grade
    descending. nDCG@k = DCG@k / IDCG@k, 0 when IDCG@k = 0 (trec_eval ndcg_cut_k, after
    Jarvelin and Kekalainen, ACM TOIS 20(4), 2002).
    """
    return _ratio(t.dcg_at(k), t.ideal_dcg_at(k))


def _mrr(t: GradeTable, k: int | None) -> np.ndarray:
    """Reciprocal rank: 1 / rank of the first relevant document, 0 if none was retrieved.

    rr = 1 / min{i : rel_i}. Without a cutoff this is trec_eval's recip_rank, which
    looks at the whole ranking: in a run, the top ``depth`` results the retriever was asked
    for (3k by default), so a first relevant document at rank 3k + 1 counts as not
    retrieved. mrr@k is 0 when the first relevant document is below rank k (an extension:
    trec_eval has no cutoff for it). The mean over queries is MRR.
    """
    first = t.first_rank
    keep = first > 0 if k is None else (first > 0) & (first <= k)
    return _ratio(keep.astype(np.float64), first)


def _map(t: GradeTable, k: int | None) -> np.ndarray:
    """Average precision: precision at the rank of each relevant document, averaged over R.

    AP = (1 / R) * sum_{i : rel_i} |{j <= i : rel_j}| / i, over the whole ranking (in a
    run, the top ``depth`` results, 3k by default), where R counts every judged relevant
    document (missed ones, and ones below ``depth``, contribute 0). 0 when R = 0.
    The mean over queries is trec_eval's map (Buckley and Voorhees, 2005).
    """
    # Summed rank by rank, in trec_eval's order.
    return _ratio(t.precision_sum(), t.num_rel)


def _evidence_of(t: GradeTable, family: str):
    if t.evidence is None:
        raise InputError(
            f"{family}@k needs span gold (evidence named by document span or quote) and an index "
            "manifest giving doc, start and end for each chunk", source="metric")
    return t.evidence


def _evidence_recall(t: GradeTable, k: int) -> np.ndarray:
    """Evidence recall@k: the share of the question's evidence characters, weighted by
    grade, that the top k chunks cover.

    evidence_recall@k = sum_{c in E, c covered by a top-k chunk} g(c) / sum_{c in E} g(c),
    over the characters c of the question's evidence E (its document spans and resolved
    quotes graded at or above the relevance level and above 0), g(c) the highest grade of
    the evidence holding c. Overlapping chunks cover a character once. It counts text, not
    chunks, so the same retrieved text scores the same at every chunk size (chunk-level
    recall@k falls when chunks are halved: twice the relevant chunks). A retrieved id the
    manifest gives no span for covers nothing. 0 for a question without evidence. No
    trec_eval counterpart (after the character-level coverage of passage-labelling tools).
    """
    return _evidence_of(t, "evidence_recall").recall_at(k, t.level)


def _evidence_precision(t: GradeTable, k: int) -> np.ndarray:
    """Evidence precision@k: the share of the top k chunks' characters that are evidence.

    evidence_precision@k = |C_k intersect E| / |C_k|, C_k the characters the top k chunks
    cover (overlapping chunks counted once), E the question's evidence characters graded at
    or above the relevance level and above 0, unweighted. Unlike precision@k it does not
    divide by k: a short ranking of tight chunks is what it rewards. 0 when the top k
    cover no character (nothing retrieved, or no span known). No trec_eval counterpart.
    """
    return _evidence_of(t, "evidence_precision").precision_at(k, t.level)


# --------------------------------------------------------------------------- registry

# Each family's kernel: (table, cutoff) -> one value per query. Its docstring is the
# family's convention, which `ci-eval metrics` and docs/metrics.md print.
KERNELS: dict[str, Callable[[GradeTable, int | None], np.ndarray]] = {
    "hit": _hit,
    "recall": _recall,
    "precision": _precision,
    "ndcg": _ndcg,
    "mrr": _mrr,
    "map": _map,
    "evidence_recall": _evidence_recall,
    "evidence_precision": _evidence_precision,
}


def describe(family: str) -> str:
    """The convention of a family, from its kernel's docstring."""
    import inspect

    return inspect.cleandoc(KERNELS[family].__doc__ or "")


# --------------------------------------------------------------------------- entry points


def build_table(
    rankings: Sequence[Sequence[str]],
    judgments: Sequence[Mapping[str, float]],
    relevance_level: int = 1,
) -> GradeTable:
    """The grade table of ordered id sequences against ``{id: grade}`` judgments.

    One dict per ranking (id -> rank) both rejects a repeated id and places the judged
    ids; everything after that is column-wise. Only judged ids are ever looked at one by
    one, not every ranked id.
    """
    if len(rankings) != len(judgments):
        raise ValueError("rankings and judgments must have one entry per query")
    n = len(rankings)
    lengths = np.zeros(n, dtype=np.int64)
    hit_query: list[int] = []
    hit_rank: list[int] = []
    hit_grade: list[float] = []
    judged_count = np.zeros(n, dtype=np.int64)
    judged_values: list = []
    ids_of = [r if isinstance(r, (list, tuple)) else list(r) for r in rankings]
    ranks = list(range(max(map(len, ids_of), default=0)))  # int objects made once
    for q, (ids, judgment) in enumerate(zip(ids_of, judgments)):
        rank_of = dict(zip(ids, ranks))
        if len(rank_of) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InputError(f"id {dup!r} is ranked twice", source="ranking", place=f"query {q}")
        lengths[q] = len(ids)
        judged_count[q] = len(judgment)
        judged_values.extend(judgment.values())
        for cid in rank_of.keys() & judgment.keys():
            grade = float(judgment[cid])
            if not grade < 0:  # a negative judgment is the same as none
                hit_query.append(q)
                hit_rank.append(rank_of[cid])
                hit_grade.append(grade)
    judged = judged_matrix(n, np.repeat(np.arange(n), judged_count),
                           np.array(judged_values, dtype=np.float64))
    return GradeTable.from_hits(n, np.array(hit_query, dtype=np.int64),
                                np.array(hit_rank, dtype=np.int64),
                                np.array(hit_grade, dtype=np.float64), lengths, judged,
                                relevance_level)


def compute_table(metrics: Sequence[Metric | str], table: GradeTable) -> dict[str, np.ndarray]:
    """Every metric's per-query values from one table (canonical name -> float64 array)."""
    resolved = [resolve_metric(m) for m in metrics]
    return {m.name: np.asarray(KERNELS[m.family](table, m.k), dtype=np.float64) for m in resolved}


def compute(
    metrics: Sequence[Metric | str],
    rankings: Sequence[Sequence[str]],
    judgments: Sequence[Mapping[str, float]],
    relevance_level: int = 1,
) -> dict[str, np.ndarray]:
    """Per-query values of each metric, aligned with ``rankings`` and ``judgments``.

    ``rankings`` are id sequences best first (already ordered, see ``trec_order.order``),
    ``judgments`` ``{id: grade}`` maps. Returns canonical name -> float64 array.
    The inputs are not modified.
    """
    resolved = [resolve_metric(m) for m in metrics]
    return compute_table(resolved, build_table(rankings, judgments, relevance_level))
