"""Gold set + what the retriever returned + the index's ids -> per-question rows.

Conventions (stated once, here):
- A gold id missing from the index is *stale*. Stale ids are removed from the question's
  gold before measuring, and a question left with no relevant gold is reported apart
  (status "stale") and kept out of the means, so a re-ingestion reads as stale labels,
  never as a catastrophic recall regression.
  Only a stale id judged relevant (grade at or above the relevance level) can make a
  question stale: a missing id graded 0 was never an answer.
- Answerable questions (status "ok", or "error" when the retriever failed on them, scored
  0 so a broken retriever cannot raise a mean) form the means, overall and per tag.
- A retriever failure is status "error" on any question, answerable or not, stale or not:
  it is never read as an abstention or as stale labels (fail closed).
- Unanswerable questions are measured only by the abstention cutoff: the app abstains when
  nothing comes back or the top score is below ``abstain_below``.

Rows come out as they are ready, in the order the results came in, as version 2 rows
(core/artefact/question_row.py); the metrics are computed a batch of questions at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain, islice, repeat
from operator import attrgetter, itemgetter

from ci_eval.core.artefact.question_result import MEASURED, in_means
from ci_eval.core.artefact.question_row import EXACT_INTEGERS, QUESTION_FIELDS, from_row, written_value
from ci_eval.core.artefact.results import Retrieved
from ci_eval.core.artefact.run_columns import RunColumns, abstains
from ci_eval.core.gold.goldset import GoldSet, Question

__all__ = ["Evaluation", "Scored", "abstains", "evaluate", "evaluate_rows"]

BATCH = 2048  # questions per metrics.compute call: its set-up cost spread, memory bounded


@dataclass(frozen=True)
class Evaluation:
    """A whole evaluation held in memory (tests and benchmarks; a run streams instead)."""

    questions: list
    summary: dict


@dataclass(slots=True)
class Scored:
    """One question measured, before and after its batch's metrics are computed."""

    question: Question
    retrieved: Retrieved
    status: str
    stale: list
    live: tuple  # (id, grade) pairs of the gold without the stale ids: what the metrics judge
    hits: list  # (0-based rank, grade) of each live gold id the retriever ranked
    first_gold_rank: int | None
    judged: float | None
    values: list  # one per metric once computed; [] when not measured

    @property
    def in_means(self) -> bool:
        """Answerable and measured (an error scores 0). An unanswerable question has no gold
        to score, even when it failed."""
        return in_means(self.status, self.question.unanswerable)


def _status(q: Question, live_relevant: bool, relevant_stale: bool, r: Retrieved) -> str:
    if r.error is not None:
        return "error"
    if q.unanswerable:
        return "unanswerable"
    # Only missing relevant ids make a question stale; one with no grade at the relevance
    # level is measured and scores 0, as trec_eval counts a query with no relevant documents.
    if relevant_stale and not live_relevant:
        return "stale"
    return "ok"


def missing_from_index(index_ids, questions) -> frozenset:
    """The gold ids of ``questions`` not in the index (none when the index is unknown):
    found once for a run, so a question is looked at closely only when it has one."""
    if index_ids is None:
        return frozenset()
    return frozenset({g for q in questions for g, _ in q.gold}.difference(index_ids))


def _split(q: Question, level, index_ids, missing: frozenset) -> tuple[list, tuple, bool]:
    """(stale ids sorted, live gold pairs, whether a stale id was relevant)."""
    gold = q.gold
    if not missing or missing.isdisjoint([g for g, _ in gold]):
        return [], gold, False  # the common case: nothing missing from the index
    stale = sorted({g for g, _ in gold if g not in index_ids})
    live = tuple((g, grade) for g, grade in gold if g in index_ids)
    return stale, live, any(grade >= level for g, grade in gold if g in stale)


_FEW = 8  # gold ids looked up in the ranking one by one; more, and the ranking is indexed


def _hits(ids: tuple, live: tuple) -> list:
    """(0-based rank, grade) of each live gold id in ``ids`` (distinct, as cleaned)."""
    if len(live) <= _FEW:
        return [(ids.index(g), grade) for g, grade in live if g in ids]
    rank_of = dict(zip(ids, range(len(ids))))
    return [(rank_of[g], grade) for g, grade in live if g in rank_of]


def score(q: Question, r: Retrieved, k: int, level, index_ids, missing: frozenset | None = None) -> Scored:
    """One question against its gold: status, stale ids, first gold rank and judged@k (the
    metric values come later, for its batch at once). ``missing``: missing_from_index."""
    if missing is None:
        missing = missing_from_index(index_ids, (q,))
    gold, ids = q.gold, r.ids
    if missing or r.error is not None or q.unanswerable or level <= 0 or len(gold) > _FEW:
        return _score(q, r, k, level, index_ids, missing)
    # The common case, in one pass: answerable, answered, nothing missing from the index, a
    # few gold ids (status "ok", live = gold), as _score finds it.
    hits = [(ids.index(g), grade) for g, grade in gold if g in ids]
    first = min([rank for rank, grade in hits if grade >= level], default=-1) + 1 or None
    top = len(ids) if len(ids) < k else k
    return Scored(q, r, "ok", [], gold, hits, first, sum([rank < k for rank, _ in hits]) / top if top else None, [])


def _score(q: Question, r: Retrieved, k: int, level, index_ids, missing: frozenset) -> Scored:
    stale, live, relevant_stale = _split(q, level, index_ids, missing)
    status = _status(q, any(grade >= level for _, grade in live), relevant_stale, r)
    ids = r.ids
    hits = _hits(ids, live)
    if level > 0:
        first = min([rank for rank, grade in hits if grade >= level], default=None)
        first = None if first is None else first + 1
    else:  # at level 0 an unjudged id counts too: the first id not judged below 0
        grades = dict(live)
        first = next((rank for rank, cid in enumerate(ids, 1) if grades.get(cid, 0) >= level), None)
    judged = None
    top = ids[:k]
    if top and status in MEASURED:
        # Over the whole gold (stale ids cannot be retrieved, so they never count): the
        # share of the top k judged at any grade, as core.judged.judged_at_k.
        judged = (sum([rank < k for rank, _ in hits]) if not stale else sum([g in top for g, _ in q.gold])) / len(top)
    return Scored(q, r, status, stale, live, hits, first, judged, [])


def _row(s: Scored) -> list:
    """The question's version 2 row, its metric values the list ``s.values`` (filled in
    place once its batch is measured) and answer_correct still None."""
    q, r = s.question, s.retrieved
    scores, judged, latency = r.scores, s.judged, r.latency_ms
    top = scores[0] if scores else None
    return [
        q.id, q.question, q.tags, q.unanswerable, s.status, sorted(q.gold) if len(q.gold) > 1 else list(q.gold),
        s.stale, s.values, s.first_gold_rank,
        # a whole score or judged@k is written as an int: written_value, its common cases first
        top if type(top) is float and not top.is_integer() else written_value(top),
        None if latency is None else round(latency, 3),
        None, judged if type(judged) is float and not judged.is_integer() else written_value(judged),
        r.error, r.warnings, tuple(zip(r.ids, scores)) if r.pairs is None else r.pairs,
    ]


def _table(measured: list[Scored], level):
    """The batch's grade table (core.metrics.GradeTable) from each question's hits, as
    metrics.build_table builds it from rankings and judgments."""
    import numpy as np

    from ci_eval.core.measure.metrics import GradeTable, judged_matrix

    n = len(measured)
    hit_query, hit_rank, hit_grade = [], [], []
    for i, s in enumerate(measured):
        for rank, grade in s.hits:
            if not grade < 0:  # a negative judgment is the same as none
                hit_query.append(i)
                hit_rank.append(rank)
                hit_grade.append(grade)
    lengths = np.fromiter([len(s.retrieved.ids) for s in measured], dtype=np.int64, count=n)
    counts = np.fromiter([len(s.live) for s in measured], dtype=np.int64, count=n)
    grades = np.array([grade for s in measured for _, grade in s.live], dtype=np.float64)
    judged = judged_matrix(n, np.repeat(np.arange(n), counts), grades)
    return GradeTable.from_hits(n, np.array(hit_query, dtype=np.int64), np.array(hit_rank, dtype=np.int64),
                                np.array(hit_grade, dtype=np.float64), lengths, judged, level)


def _measure(measured: list[Scored], resolved, level, chunks=None) -> None:
    """Each measured question's metric values, into its ``values`` list (its row's);
    ``chunks`` (id -> core.gold.manifest.Chunk) place the ranked ids in their documents
    for the evidence metrics."""
    if not measured:
        return
    import numpy as np

    from ci_eval.core.measure.metrics import compute_table

    table = _table(measured, level)
    if chunks is not None and any(m.on_evidence for m in resolved):
        from ci_eval.core.gold.evidence import evidence_table

        table.evidence = evidence_table([s.question for s in measured], [s.retrieved.ids for s in measured], chunks)
    values = compute_table(resolved, table)
    table = np.column_stack([values[m.name] for m in resolved])
    for s, row in zip(measured, _written(table)):
        s.values.extend(row)


def _written(values) -> list:
    """Metric values (a float array, one row a question) as rows hold them: whole ones as
    ints, as question_row.written_value writes them, found for the whole array at once."""
    import numpy as np

    whole = (values == np.trunc(values)) & (np.abs(values) < EXACT_INTEGERS) & ~np.signbit(values)
    if not whole.any():
        return values.tolist()
    out = values.astype(object)
    out[whole] = values[whole].astype(np.int64).astype(object)
    return out.tolist()


Judge = Callable[[Scored, Mapping[str, float]], "bool | None"]


def evaluate_rows(
    gold: GoldSet,
    retrieved: Iterable[tuple[str, Retrieved]],
    *,
    k: int,
    metrics: tuple[str, ...],
    relevance_level: int = 1,
    index_ids=None,
    answers: Mapping[str, bool] | None = None,
    judge: Judge | None = None,
    batch: int = BATCH,
    chunks: Mapping | None = None,
) -> Iterator[list]:
    """Version 2 rows in the order of ``retrieved``, ``batch`` questions at a time.
    ``judge(scored, metric values)`` decides answer_correct when given (the demo's
    stand-in judge); else ``answers`` (the team's end-to-end eval) does, or nothing.
    ``chunks`` (the index's, id -> Chunk) give the evidence metrics the ranked spans."""
    from ci_eval.core.measure.names import resolve_metric

    by_id = gold.by_id()
    resolved = [resolve_metric(m) for m in metrics]
    names = [m.name for m in resolved]
    missing = missing_from_index(index_ids, gold.questions)
    retrieved = iter(retrieved)
    # each batch taken whole in C (islice); neither a batch's results nor its rows are still
    # held while the next batch is gathered
    while pending := list(islice(retrieved, batch)):
        rows, pending = _batch_rows(pending, by_id, k, relevance_level, index_ids, missing, resolved, names, answers,
                                    judge, chunks), None
        yield from rows
        rows = None


def _batch_rows(pairs, by_id, k, level, index_ids, missing, resolved, names, answers, judge, chunks=None) -> list:
    """One batch's rows: its columns at once (plain_rows) when it is the common batch and
    no judge looks at each question and no metric reads the evidence, else a question at
    a time."""
    plain = judge is None and not any(m.on_evidence for m in resolved)
    rows = plain_rows(pairs, by_id, k, level, missing, resolved) if plain else None
    if rows is not None:
        if answers is not None:
            for row in rows:
                row[_ANSWER] = answers.get(row[0])
        return rows
    rows, measured, for_judge = [], [], []
    for qid, r in pairs:
        s = score(by_id[qid], r, k, level, index_ids, missing)
        rows.append(_row(s))
        if s.in_means:
            measured.append(s)
        if judge is not None:
            for_judge.append(s)
    return _emit(rows, measured, for_judge, resolved, level, names, answers, judge, chunks)


def plain_rows(pairs: list, by_id: Mapping[str, Question], k: int, level, missing: frozenset, resolved) -> list | None:
    """The rows of a batch where every question was answered and cites no id missing from
    the index, at a relevance level above 0 (statuses "ok" and "unanswerable" only), made a
    column at a time: each gold id's rank found in one pass over the batch's gold, first
    gold ranks, judged@k and the grade table as array passes, the rows zipped from the
    columns. The values and rows of ``score`` and ``_row``; None for any other batch."""
    import numpy as np

    if level <= 0 or not pairs:
        return None
    questions = list(map(by_id.__getitem__, map(itemgetter(0), pairs)))
    results = list(map(itemgetter(1), pairs))
    golds = list(map(_GOLD, questions))
    flat = list(chain.from_iterable(golds))
    if set(map(_ERROR, results)) != _NONE or (missing and not missing.isdisjoint(map(itemgetter(0), flat))):
        return None
    n, ranked = len(pairs), list(map(_IDS, results))
    lengths = list(map(len, ranked))
    query = np.repeat(np.arange(n), np.fromiter(map(len, golds), dtype=np.int64, count=n))
    # each gold id's 0-based rank in its question's ranking (ids distinct once cleaned), -1 if absent
    rank = np.array([ids.index(g) if g in ids else -1
                     for ids, (g, _) in zip(map(ranked.__getitem__, query.tolist()), flat)], dtype=np.int64)
    grade = np.fromiter(map(itemgetter(1), flat), dtype=np.float64, count=len(flat))
    answerable = [not q.unanswerable for q in questions]
    columns = _gold_columns(n, query, rank, grade, np.asarray(lengths, dtype=np.int64), k, level, answerable)
    values = iter(_batch_values(resolved, answerable, query, rank, grade, lengths, level))
    return list(map(list, zip(
        map(itemgetter(0), pairs), map(_QUESTION, questions), map(_TAGS, questions), map(_UNANSWERABLE, questions),
        [_STATUS[a] for a in answerable], map(sorted, golds), map(list, repeat((), n)),
        [next(values) if a else [] for a in answerable], columns[0],
        _tops([scores[0] if scores else None for scores in map(_SCORES, results)]),
        [None if latency is None else round(latency, 3) for latency in map(_LATENCY, results)],
        repeat(None, n), columns[1], repeat(None, n), map(_WARNINGS, results),
        [tuple(zip(r.ids, r.scores)) if r.pairs is None else r.pairs for r in results])))


def _tops(tops: list) -> list:
    """Top scores as rows hold them (written_value), for the whole batch at once when every
    one is a float."""
    import numpy as np

    if set(map(type, tops)) != _FLOAT:
        return list(map(written_value, tops))
    return _written(np.array(tops, dtype=np.float64))


def _gold_columns(n: int, query, rank, grade, lengths, k: int, level, answerable: list) -> tuple[list, list]:
    """First gold ranks and judged@k of a batch (one entry a gold id in ``query``, ``rank``,
    ``grade``; rank -1 when not retrieved), as score finds them a question at a time."""
    import numpy as np

    relevant = (rank >= 0) & (grade >= level)
    never = np.iinfo(np.int64).max
    first = np.full(n, never, dtype=np.int64)
    np.minimum.at(first, query[relevant], rank[relevant])
    in_top = np.bincount(query[(rank >= 0) & (rank < k)], minlength=n)
    top = np.minimum(lengths, k)
    judged = _written(in_top / np.maximum(top, 1))  # a share of at most 1: 0 and 1 are written as ints
    return ([None if f == never else f + 1 for f in first.tolist()],
            [j if a and t else None for a, t, j in zip(answerable, top.tolist(), judged)])


def _batch_values(resolved, answerable: list, query, rank, grade, lengths: list, level) -> list:
    """The metric values of a batch's answerable questions, as rows hold them, from its
    grade table (what _table builds from each question's hits)."""
    import numpy as np

    from ci_eval.core.measure.metrics import GradeTable, compute_table, judged_matrix

    answerable = np.asarray(answerable, dtype=bool)
    m = int(answerable.sum())
    if not m:
        return []
    measured = answerable[query]  # the gold of the questions measured (an unanswerable one has none in a file)
    position, rank, grade = (np.cumsum(answerable) - 1)[query[measured]], rank[measured], grade[measured]
    hit = (rank >= 0) & (grade >= 0)  # a negative judgment is the same as none
    table = GradeTable.from_hits(m, position[hit], rank[hit], grade[hit],
                                 np.asarray(lengths, dtype=np.int64)[answerable],
                                 judged_matrix(m, position, grade), level)
    values = compute_table(resolved, table)
    return _written(np.column_stack([values[metric.name] for metric in resolved]))


_GOLD, _QUESTION, _TAGS, _UNANSWERABLE = (attrgetter(a) for a in ("gold", "question", "tags", "unanswerable"))
_ERROR, _IDS, _SCORES, _LATENCY, _WARNINGS = (attrgetter(a) for a in ("error", "ids", "scores", "latency_ms",
                                                                       "warnings"))
_NONE, _FLOAT, _STATUS = {None}, {float}, {True: "ok", False: "unanswerable"}


_ANSWER = QUESTION_FIELDS.index("answer_correct")  # where a row holds it


def _emit(rows, measured, for_judge, resolved, level, names, answers, judge, chunks=None) -> list:
    _measure(measured, resolved, level, chunks)
    if judge is not None:
        for row, s in zip(rows, for_judge):
            row[_ANSWER] = judge(s, dict(zip(names, s.values)))
    elif answers is not None:
        for row in rows:
            row[_ANSWER] = answers.get(row[0])
    return rows


def evaluate(gold: GoldSet, retrieved: Iterable[tuple[str, Retrieved]], *, k: int, metrics: tuple[str, ...],
             abstain_below: float | None = None, **options) -> Evaluation:
    """The whole evaluation in memory, each question as its version 1 object; ``options``
    as ``evaluate_rows`` takes them."""
    columns = RunColumns(metrics, abstain_below, k)
    questions = []
    for row in evaluate_rows(gold, retrieved, k=k, metrics=metrics, **options):
        columns.add(row)
        questions.append(from_row(row, metrics))
    return Evaluation(questions, columns.summary())
