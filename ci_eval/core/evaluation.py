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
(core/question_row.py); the metrics are computed a batch of questions at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from ci_eval.core.artefact import MEASURED
from ci_eval.core.goldset import GoldSet, Question
from ci_eval.core.judged import judged_at_k
from ci_eval.core.question_row import EXACT_INTEGERS, from_row, written_value
from ci_eval.core.results import Retrieved
from ci_eval.core.run_columns import RunColumns, abstains

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
    live: dict  # gold without the stale ids: what the metrics judge against
    first_gold_rank: int | None
    judged: float | None
    values: list  # one per metric once computed; [] when not measured

    @property
    def in_means(self) -> bool:
        """Answerable and measured (an error scores 0). An unanswerable question has no gold
        to score, even when it failed."""
        return self.status in MEASURED and not self.question.unanswerable


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


def score(q: Question, r: Retrieved, k: int, level, index_ids) -> Scored:
    gold = q.gold
    if index_ids is None or all(g in index_ids for g, _ in gold):
        stale, live = [], dict(gold)  # the common case: nothing missing from the index
        relevant_stale = False
    else:
        stale = sorted({g for g, _ in gold if g not in index_ids})
        live = {g: grade for g, grade in gold if g in index_ids}
        relevant_stale = any(grade >= level for g, grade in gold if g in stale)
    live_relevant = any(grade >= level for grade in live.values())
    status = _status(q, live_relevant, relevant_stale, r)
    first = None
    for rank, cid in enumerate(r.ids, 1):
        if live.get(cid, 0) >= level:
            first = rank
            break
    judged = None
    top = r.ids[:k]
    if top and status in MEASURED:
        # Over the whole gold (stale ids cannot be retrieved, so they never count).
        judged = judged_at_k(top, dict(gold) if stale else live, k)
    return Scored(q, r, status, stale, live, first, judged, [])


def _row(s: Scored, answer) -> tuple:
    q, r = s.question, s.retrieved
    return (
        q.id, q.question, q.tags, q.unanswerable, s.status, sorted(q.gold), s.stale, s.values,
        s.first_gold_rank, written_value(r.scores[0]) if r.scores else None,
        None if r.latency_ms is None else round(r.latency_ms, 3),
        answer, written_value(s.judged), r.error, r.warnings, tuple(zip(r.ids, r.scores)),
    )


def _measure(batch: list[Scored], resolved, level) -> None:
    measured = [s for s in batch if s.in_means]
    if not measured:
        return
    from ci_eval.core.metrics import compute

    values = compute(resolved, [s.retrieved.ids for s in measured], [s.live for s in measured], level)
    columns = [_written(values[m.name]) for m in resolved]
    for i, s in enumerate(measured):
        s.values = [column[i] for column in columns]


def _written(column) -> list:
    """A metric's values (a float array) as rows hold them: whole ones as ints, as
    question_row.written_value writes them, found for the whole column at once."""
    import numpy as np

    values = column.tolist()
    whole = np.flatnonzero((column == np.trunc(column)) & (np.abs(column) < EXACT_INTEGERS) & ~np.signbit(column))
    for i, v in zip(whole.tolist(), column[whole].astype(np.int64).tolist()):
        values[i] = v
    return values


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
) -> Iterator[tuple]:
    """Version 2 rows in the order of ``retrieved``, ``batch`` questions at a time.
    ``judge(scored, metric values)`` decides answer_correct when given (the demo's
    stand-in judge); else ``answers`` (the team's end-to-end eval) does, or nothing."""
    from ci_eval.core.metrics import resolve_metric

    by_id = gold.by_id()
    resolved = [resolve_metric(m) for m in metrics]
    names = [m.name for m in resolved]
    pending: list[Scored] = []
    for qid, r in retrieved:
        pending.append(score(by_id[qid], r, k, relevance_level, index_ids))
        if len(pending) >= batch:
            yield from _emit(pending, resolved, relevance_level, names, answers, judge)
            pending = []
    yield from _emit(pending, resolved, relevance_level, names, answers, judge)


def _emit(pending, resolved, level, names, answers, judge) -> Iterator[tuple]:
    _measure(pending, resolved, level)
    for s in pending:
        if judge is not None:
            answer = judge(s, dict(zip(names, s.values)))
        else:
            answer = None if answers is None else answers.get(s.question.id)
        yield _row(s, answer)


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
