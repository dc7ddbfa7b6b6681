"""What a runner is asked: one question, and the protocol every runner type follows."""

from __future__ import annotations

import importlib
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


# retriever.type -> the module whose ``runner`` implements it. A new type is one module and
# one line here; modules are imported only when their type is used.
RUNNER_MODULES = {
    "python": "ci_eval.retrieval.python_runner",
    "command": "ci_eval.retrieval.command_runner",
    "run-file": "ci_eval.retrieval.run_file",
    "langchain": "ci_eval.retrieval.langchain_runner",
    "llamaindex": "ci_eval.retrieval.llamaindex_runner",
    "haystack": "ci_eval.retrieval.haystack_runner",
}


# The types whose user code runs in the worker process (retrieval/worker.py).
IN_WORKER = frozenset({"python", "langchain", "llamaindex", "haystack"})


def runner_for(retriever_type: str) -> Runner:
    """The runner of a type. The python and framework types run the user's code in a worker
    process watched from here (retrieval/worker.py), so that it cannot hold this one."""
    if retriever_type in IN_WORKER:
        return importlib.import_module("ci_eval.retrieval.worker").runner
    return importlib.import_module(RUNNER_MODULES[retriever_type]).runner
