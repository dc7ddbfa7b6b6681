"""How large a run's artefact will be: known in part before the retriever is called, and
projected from its first rows once they are written.

A run whose artefact would pass the size limit a later run reads as its baseline must stop
early, not an hour of retrieval in. Two checks share that job:

- before retrieval, the part the gold set decides (each question's id, text, tags and gold,
  and the head) is counted exactly: when that alone is over the limit no depth can help;
- once the first ``probe_rows`` rows are written, the rest is projected from their mean
  size. The rows of one run are alike (the same depth, metrics and id shapes), so the
  projection lands within a few percent of what is written (docs/benchmarks.md, "The size
  check"), where a bound from the largest form of every score and id was 2.3x the real size
  and refused runs that fit. A run projected over is stopped there, with a depth that fits
  measured on those rows' own rankings.

The write itself still refuses the byte past the limit (inputs/artefact_out.py), so a run
whose later rows grow, or whose end keys (``stages``, ``repeat``, ``calls``) are large, is
caught there with nothing half-written. Pure: the caller reads the limit and raises.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

from ci_eval.core.artefact.artefact_writer import artefact_pieces, compact

_BATCH = 2048
# The projection waits for this share of a run's rows (1 in PROBE_SHARE), and for at least
# PROBE_LEAST: enough rows for their mean to speak for the rest, a small share of the work
# thrown away when the run is stopped. A run of no more rows than that is held by the write.
PROBE_SHARE, PROBE_LEAST = 50, 512
# The advice keeps this margin under the limit: the depth it names is measured on the probe's
# rows, and the rest may be a little larger.
_ADVICE_MARGIN = 0.95


# id, question, tags, gold, and gold again for ``stale`` (a subset of the gold ids, each
# written shorter than its [id, grade] pair); the tuple's encoding is 6 bytes more than the
# fields (brackets, 4 commas), which retrieved_bytes counts already.
_known = operator.attrgetter("id", "question", "tags", "gold", "gold")


def known_bytes(questions: Sequence) -> int:
    """The gold set's fields of every question's row, exactly as large as written (or
    larger), encoded a batch at a time."""
    total = 0
    for start in range(0, len(questions), _BATCH):
        batch = list(map(_known, questions[start:start + _BATCH]))
        total += len(compact(batch).encode("utf-8")) - len(batch) - 1 - 6 * len(batch)
    return total


def head_bytes(head: dict) -> int:
    """The exact bytes of everything before the first row and of the frame around the rows."""
    return sum(len(piece.encode("utf-8")) for piece in artefact_pieces(head, (), dict))


def probe_rows(questions: int) -> int | None:
    """After how many rows the projection is made; None when the run is too small for one
    (the write's own check holds it)."""
    rows = max(PROBE_LEAST, questions // PROBE_SHARE)
    return rows if rows < questions else None


@dataclass(frozen=True)
class SizeProbe:
    """What the first rows of a run say of its size. ``rows`` rows took ``written - head``
    bytes after the ``head`` bytes before them, ``known`` of them their gold-set fields;
    ``rankings`` are the first of those rows' rankings, each a list of ``[id, score]``
    entries."""

    rows: int
    written: int
    head: int
    known: int
    rankings: tuple

    def projected(self, total: int, known: int, head: int | None = None) -> int:
        """The artefact's size for ``total`` rows whose gold-set fields take ``known`` bytes
        (counted exactly), each row's retrieved part at the probe's mean, after ``head``
        bytes (by default the probe's own; a shard's merged artefact has a head of its
        own). The end keys, a few kilobytes, are left to the write's check."""
        retrieved = self.written - self.head - self.known
        return (self.head if head is None else head) + known + round(total * retrieved / self.rows)

    def depth_that_fits(self, total: int, known: int, depth: int, least: int, limit: int,
                        head: int | None = None) -> int | None:
        """The largest depth from ``least`` below ``depth`` whose projection is under
        ``limit`` with a margin: the bytes of the probe's ranking entries past that depth
        (with the comma before each) taken off every row in proportion. None when not even
        ``least`` fits."""
        past = [0] * (depth + 1)  # past[d]: the entries' bytes at positions d and after
        for ranking in self.rankings:
            for position, entry in enumerate(ranking[:depth]):
                past[position] += len(compact(entry).encode("utf-8")) + 1
        for d in range(depth - 1, -1, -1):
            past[d] += past[d + 1]
        whole = self.projected(total, known, head)
        scale = total / max(len(self.rankings), 1)
        for d in range(depth - 1, least - 1, -1):
            if whole - past[d] * scale <= limit * _ADVICE_MARGIN:
                return d
        return None
