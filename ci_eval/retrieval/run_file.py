"""Retriever type ``run-file``: a precomputed run (TREC, JSON lines, or OpenInference
retrieval spans)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ci_eval.core.artefact.results import NOT_IN_RUN_FILE, ResultError, Retrieved, clean, clean_staged, failed
from ci_eval.errors import InputError
from ci_eval.retrieval.query import Query
from ci_eval.retrieval.run_file_checks import check_results


def read_run_file(path: str, fmt: str, source: str) -> dict[str, list[tuple[str, float]]]:
    """A precomputed run: TREC (``qid Q0 docid rank score tag``) or JSON lines."""
    from ci_eval.inputs.files import decode, json_lines, read_bytes

    if fmt == "trec":
        from ci_eval.trec.parse import read_run_pairs

        return read_run_pairs(path)
    raw = read_bytes(path, "run file")
    text = decode(raw, path)
    run: dict[str, list] = {}
    for n, msg in json_lines(text, path):
        if isinstance(msg, InputError):
            raise msg
        if not isinstance(msg, dict) or not isinstance(msg.get("id"), str):
            raise InputError('expected an object with a string "id"', path, f"line {n}")
        if not isinstance(msg.get("results"), list):
            raise InputError('expected "results": a list of {"id", "score"}', path, f"line {n}")
        if msg["id"] in run:
            raise InputError(f"question {msg['id']!r} appears twice", path, f"line {n}")
        check_results(msg["id"], msg["results"], path, f"line {n}")
        run[msg["id"]] = msg["results"]
    return run


def run_from_file(
    run: dict, queries: Sequence[Query], depth: int, source: str, known_ids=None
) -> Iterator[tuple[str, Retrieved]]:
    for q in queries:
        if q.id not in run:
            # trec_eval -c: a question missing from the run scores 0 and counts.
            yield q.id, Retrieved(warnings=(f"{NOT_IN_RUN_FILE} {source}",))
            continue
        answer = run[q.id]
        try:  # a traced question retrieved in several calls is {"calls": [...]} (openinference.py)
            yield q.id, (clean_staged(answer, depth, None, known_ids) if isinstance(answer, dict)
                         else clean(answer, depth, None, known_ids))
        except ResultError as exc:
            yield q.id, failed(f"unusable result in {source}: {exc}")


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    r = config.retriever
    if r.format == "openinference":
        from ci_eval.retrieval.openinference import read_spans

        run = read_spans(r.path, queries, r.id_from or "id", r.score)
    else:
        run = read_run_file(r.path, r.format, r.path)
    return run_from_file(run, queries, r.depth, r.path, known_ids)
