"""TREC pooling: which chunks a person should judge for each question.

The pool of a question is the union of the top ``depth`` results of every run (the
configured retriever, a PR's head and base artefacts, another retriever's run file), minus
the chunks already judged. Chunks are offered in pooled rank order: by the best rank any run
gave them, ties broken by the order the runs were given, then by the run's own order, so
the chunk most likely to matter comes first and the order never depends on set iteration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def pool_question(runs: Sequence[Sequence[str]], depth: int, judged: Iterable[str] = ()) -> tuple[str, ...]:
    """The chunks to judge for one question, from its rankings (best first) in ``runs``."""
    if depth < 1:
        raise ValueError(f"pool depth must be at least 1, got {depth}")
    skip = set(judged)
    best: dict[str, tuple[int, int]] = {}
    for run_index, ranking in enumerate(runs):
        for rank, chunk in enumerate(ranking[:depth]):
            if chunk in skip:
                continue
            key = (rank, run_index)
            if chunk not in best or key < best[chunk]:
                best[chunk] = key
    return tuple(sorted(best, key=best.__getitem__))


def pool(
    runs: Sequence[Mapping[str, Sequence[str]]],
    question_ids: Sequence[str],
    depth: int,
    judged: Mapping[str, Iterable[str]],
) -> dict[str, tuple[str, ...]]:
    """``{question id: pooled chunk ids}`` for each of ``question_ids``, in that order.

    ``runs`` map question ids to rankings; a run that lacks a question adds nothing to it.
    """
    return {
        qid: pool_question([run.get(qid, ()) for run in runs], depth, judged.get(qid, ()))
        for qid in question_ids
    }
