"""What a run's summary and its terminal report need from its questions, kept as columns
while the rows stream past (a float per metric per measured question, counts, a few
example ids), never the rows themselves.

Fed one version 2 row at a time, by the run as it writes each row and by the merge as it
copies the parts' rows, so a merged run's summary is the unsharded run's by construction.
The means are ``math.fsum`` over the question values: exactly rounded, so the order the
values arrive in cannot change them.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from operator import itemgetter

from ci_eval.core.artefact.question_result import in_means
from ci_eval.core.artefact.question_row import FIELD
from ci_eval.core.artefact.results import NOT_IN_INDEX, STOPPED_EARLY, WARNING_KINDS

# Positions in a version 2 row of the fields read here.
(ID, TAGS, UNANSWERABLE, STATUS, STALE, METRICS, TOP, LATENCY, JUDGED, ERROR, WARNINGS, RANKING) = (
    FIELD[name] for name in ("id", "tags", "unanswerable", "status", "stale", "metrics", "top_score",
                             "latency_ms", "judged_at_k", "error", "warnings", "ranking"))
# The fields add reads, taken from a row in one call.
_READ = itemgetter(ID, TAGS, UNANSWERABLE, STATUS, STALE, METRICS, TOP, LATENCY, JUDGED, ERROR, WARNINGS, RANKING)
EXAMPLES = 3  # ids kept per kind of note: the terminal names a few, never every question
_NOT_RUN = STOPPED_EARLY.split("{")[0]


def abstains(top_score: float | None, cutoff: float | None) -> bool:
    """The app says "I could not find this" when nothing came back or the top score is
    below the cutoff. Without a cutoff only an empty result abstains."""
    if top_score is None:
        return True
    return cutoff is not None and top_score < cutoff


@dataclass
class Note:
    """How many questions one remark is about, and the first few of them."""

    count: int = 0
    ids: list = field(default_factory=list)

    def add(self, qid: str) -> None:
        self.count += 1
        if len(self.ids) < EXAMPLES:
            self.ids.append(qid)


@dataclass
class Errors:
    """The failed questions: the count, the first one, and the run's early stop."""

    count: int = 0
    unanswerable: int = 0
    first: tuple[str, str] | None = None  # (question id, error)
    not_run: int = 0
    not_run_error: str | None = None

    def add(self, qid: str, error: str, unanswerable: bool) -> None:
        self.count += 1
        self.unanswerable += unanswerable
        if self.first is None:
            self.first = (qid, error)
        if error.startswith(_NOT_RUN):
            self.not_run += 1
            self.not_run_error = self.not_run_error or error


class _Values:
    """Metric values of measured questions, row-major (one row of len(metrics) a question)."""

    def __init__(self, width: int):
        self.width, self.values, self.count = width, array("d"), 0

    def add(self, row_values) -> None:
        if len(row_values) != self.width:  # as the reader takes it: a missing value is 0
            row_values = [*row_values, *[0.0] * self.width][: self.width]
        try:
            self.values.extend(row_values)
        except TypeError:  # a metric recorded as null in a version 2 part: scored 0
            del self.values[len(self.values) - len(self.values) % self.width:]
            self.values.extend(0.0 if v is None else v for v in row_values)
        self.count += 1

    def means(self, metrics, rows=None) -> dict:
        """Means over every row, or over ``rows`` (positions, an array of ints)."""
        import numpy as np

        n = self.count if rows is None else len(rows)
        if not n:
            return {}
        table = np.frombuffer(self.values, dtype=np.float64).reshape(-1, self.width)
        if rows is not None:
            table = table[np.frombuffer(rows, dtype=np.int64)]
        return {m: math.fsum(table[:, j].tolist()) / n for j, m in enumerate(metrics)}


class RunColumns:
    """Everything ``summary()`` and the run's notes read, gathered a row at a time."""

    def __init__(self, metrics, abstain_below: float | None, k: int, depth: int | None = None):
        self.metrics, self.abstain_below, self.k, self.depth = tuple(metrics), abstain_below, k, depth
        self.asked = 0
        self.overall = _Values(len(self.metrics))
        # tag -> positions of its questions among the measured ones: a tag's means are
        # taken from the overall values, not from a copy of them
        self.by_tag: dict[str, array] = {}
        self.stale_questions, self.stale_ids = 0, set()
        self.unanswerable = self.abstained = 0
        self.latencies, self.judged = array("d"), array("d")
        self.errors = Errors()
        self.citing_stale = Note()
        self.warnings = {kind: Note() for kind in WARNING_KINDS}
        self.empty, self.short = Note(), Note()
        # ids returned, and how many of them the index does not have: a run whose answers
        # are mostly outside its index searched another index (a sweep stops on it)
        self.returned_ids = self.outside_ids = 0

    def add(self, row) -> None:
        """One version 2 row, in gold-set order."""
        qid, tags, unanswerable, status, stale, metrics, top, latency, judged, error, warnings, ranking = _READ(row)
        self.asked += 1
        if unanswerable:
            self.unanswerable += 1
            self.abstained += status != "error" and abstains(top, self.abstain_below)
        elif in_means(status, unanswerable):
            position = self.overall.count
            self.overall.add(metrics)
            for tag in tags:
                rows = self.by_tag.get(tag)
                if rows is None:
                    rows = self.by_tag[tag] = array("q")
                rows.append(position)
        if latency is not None:
            self.latencies.append(latency)
        if judged is not None:
            self.judged.append(judged)
        if stale:
            self.stale_ids.update(stale)
            self.citing_stale.add(qid)
        if status == "stale":
            self.stale_questions += 1
        if warnings:
            self._warnings(row)
        if status == "error":
            self.errors.add(qid, error or "", unanswerable)
            return
        returned = len(ranking)
        self.returned_ids += returned
        if not returned and not unanswerable:
            self.empty.add(qid)
        if self.depth and 0 < returned < self.depth:
            self.short.add(qid)

    def _warnings(self, row) -> None:
        for kind, note in self.warnings.items():
            if any(kind in w for w in row[WARNINGS]):
                note.add(row[ID])
        for w in row[WARNINGS]:
            count = w.split(" ", 1)[0]
            if NOT_IN_INDEX in w and count.isdigit():  # "15 id(s) not in the index, e.g. ..."
                self.outside_ids += int(count)

    @property
    def mostly_outside(self) -> bool:
        """More than half of the ids returned are not in the index."""
        return self.returned_ids > 0 and 2 * self.outside_ids > self.returned_ids

    def summary(self) -> dict:
        """The artefact's ``summary``: the keys and values version 1 computed from its rows."""
        latencies = sorted(self.latencies)
        return {
            "overall": {"count": self.overall.count, "means": self.overall.means(self.metrics)},
            "by_tag": {tag: {"count": len(rows), "means": self.overall.means(self.metrics, rows)}
                       for tag, rows in sorted(self.by_tag.items())},
            # Distinct ids: one chunk missing from the index is one stale label to fix.
            "stale": {"questions": self.stale_questions, "ids": len(self.stale_ids)},
            # A failed question did not abstain: the retriever never answered it.
            "unanswerable": {"count": self.unanswerable, "abstained": self.abstained,
                             "cutoff": self.abstain_below},
            "errors": self.errors.count,
            "latency_ms": {
                "mean": round(math.fsum(latencies) / len(latencies), 3),
                "p50": _percentile(latencies, 50),
                "p95": _percentile(latencies, 95),
            } if latencies else None,
            # The mean over questions that returned something, summed in gold-set order.
            "judged_at_k": {"k": self.k, "mean": sum(self.judged) / len(self.judged) if self.judged else None},
        }


def _percentile(sorted_values: list, p: float) -> float:
    # Nearest-rank percentile: an observed latency, never an interpolated one.
    index = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[index]
