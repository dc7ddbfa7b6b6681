"""A part's rows held to their own gold and ranking before a merge takes them.

Every row carries what its metrics were computed from: the question's gold (with grades),
the stale ids among it and the ranking the retriever returned. The merge computes each
row again from those, by the same core/artefact/evaluation.py the run uses, and refuses a row whose
status, metric values, first gold rank, top score or judged@k differ: a part edited by hand
(every metric set to 1, the first gold rank moved to 1, "ok" turned into "stale") never
reaches the merged summary.

What the row cannot vouch for is left as written: its latency, answer_correct (the team's
own end-to-end judgement), warnings and error text, and the evidence metrics (measured on
the documents' characters, which neither the row nor the merge holds). The stale ids stand for the index the
run checked against, which the merge does not see; a row that names as stale a gold id
another row of its batch measured as live is refused all the same (one run, one index).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice

from ci_eval.core.artefact.question_row import FIELD, read_value
from ci_eval.core.artefact.results import Retrieved
from ci_eval.core.gold.goldset import GoldSet, Question
from ci_eval.errors import InputError

# The fields computed from gold and ranking, in the order a difference is reported.
RECOMPUTED = ("status", "stale", "metrics", "first_gold_rank", "top_score", "judged_at_k")
_BATCH = 256  # rows a part at a time: a merge holds one batch per part


def _question(row: list) -> Question:
    return Question(id=row[FIELD["id"]], question=row[FIELD["question"]],
                    gold=tuple((cid, grade) for cid, grade in row[FIELD["gold"]]),
                    tags=tuple(row[FIELD["tags"]]), unanswerable=row[FIELD["unanswerable"]])


def _retrieved(row: list) -> Retrieved:
    ranking = row[FIELD["ranking"]]
    return Retrieved(ids=tuple(cid for cid, _ in ranking), scores=tuple(score for _, score in ranking),
                     latency_ms=row[FIELD["latency_ms"]], error=row[FIELD["error"]],
                     warnings=tuple(row[FIELD["warnings"]]))


def _same(field: str, written, computed) -> bool:
    if field == "metrics":
        return len(written) == len(computed) and all(
            read_value(a) == read_value(b) for a, b in zip(written, computed))
    if field in ("top_score", "judged_at_k"):
        return read_value(written) == read_value(computed)
    return written == computed


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:56] + "...]"


def _recomputed(batch: list, metrics, k: int, level) -> list:
    from ci_eval.core.artefact.evaluation import evaluate_rows

    questions = tuple(map(_question, batch))
    gold_ids = {cid for q in questions for cid, _ in q.gold}
    stale = {cid for row in batch for cid in row[FIELD["stale"]]}
    # The index as the rows describe it: every gold id but the ones they call stale (no
    # stale id at all: the run saw no index, or nothing was missing from it).
    index_ids = gold_ids - stale if stale else None
    gold = GoldSet(schema_version=1, index_version=None, questions=questions)
    pairs = [(q.id, _retrieved(row)) for q, row in zip(questions, batch)]
    return list(evaluate_rows(gold, pairs, k=k, metrics=tuple(metrics), relevance_level=level,
                              index_ids=index_ids, batch=len(batch)))


def _checkable(metrics) -> list[int]:
    """The positions of the metrics a row's gold and ranking give (not the evidence ones)."""
    from ci_eval.core.measure.names import resolve_metric

    return [n for n, m in enumerate(metrics) if not resolve_metric(m).on_evidence]


def rechecked_rows(rows: Iterable[list], source: str, metrics, k: int, level) -> Iterator[list]:
    """``rows`` (one part's, in order) passed on unchanged once each agrees with what its
    gold and ranking give; the first that does not is refused, naming the part, the
    question and the field."""
    rows = iter(rows)
    done = 0
    checkable = _checkable(metrics)
    every = len(checkable) == len(metrics)
    while batch := list(islice(rows, _BATCH)):
        fresh_rows = _recomputed(batch, [metrics[n] for n in checkable], k, level)
        for i, (row, fresh) in enumerate(zip(batch, fresh_rows)):
            for field in RECOMPUTED:
                written, computed = row[FIELD[field]], fresh[FIELD[field]]
                if field == "metrics" and not every and written:
                    written = [written[n] for n in checkable] if len(written) == len(metrics) else written
                if not _same(field, written, computed):
                    raise InputError(
                        f"question {_shown(row[FIELD['id']])}: {field} says {_shown(written)} but its gold and "
                        f"ranking give {_shown(computed)} (edited after the run?)",
                        source, f"questions[{done + i}].{field}")
        done += len(batch)
        yield from batch
