"""A precomputed run's rankings checked as the user's input they are, for both readers of
run files: JSON lines (retrieval/run_file.py) and OpenInference spans
(retrieval/openinference.py)."""

from __future__ import annotations

from ci_eval.core.artefact.results import ResultError, parse_pair
from ci_eval.errors import InputError


def check_results(qid: str, results: list, path: str, place: str) -> None:
    """The file is the user's input, not a live retriever: a bad entry is a bad file (exit 2,
    with its line), not a question the retriever failed on."""
    seen: set[str] = set()
    for position, item in enumerate(results, 1):
        try:
            cid, _ = parse_pair(item, position)
        except ResultError as exc:
            raise InputError(f"question {qid!r}: {exc}", path, place) from None
        # As trec_eval does for a TREC run: one document twice in a query is an error.
        if cid in seen:
            raise InputError(f"question {qid!r}: document {cid!r} appears twice", path, place)
        seen.add(cid)
