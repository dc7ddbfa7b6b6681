"""What a runner is asked: one question, and the protocol every runner type follows."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ci_eval.core.artefact.results import Retrieved


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    question: str


def iter_queries(questions: Iterable) -> list:
    """The questions as queries. A gold-set Question holds the two fields a runner reads
    (``id`` and ``question``), so it is passed as it is rather than copied into a Query."""
    return list(questions)


class Runner(Protocol):
    """What every retriever type provides: the run's config and the questions in, each
    question's ``(id, Retrieved)`` out, in question order. ``known_ids`` is the index's ids
    when a manifest is configured (ids outside it become warnings), else None."""

    def __call__(self, config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]: ...
