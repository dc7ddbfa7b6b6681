"""Where the pool and the chunk texts come from: run artefacts and TREC run files given with
``--pool``, the configured retriever, and the manifest's ``text``, a JSONL chunks file or a
``module:function(ids) -> texts`` callable."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence

from ci_eval.errors import InputError
from ci_eval.inputs.files import decode, read_bytes, read_json_lines

MAX_TEXT = 20000  # characters shown per chunk: enough to judge, bounded for the page


def rankings_from_file(path: str) -> dict[str, list[str]]:
    """A run artefact (JSON) or a TREC run file, as ``{question id: chunk ids best first}``."""
    from ci_eval.inputs.loaders import MAX_ARTEFACT_BYTES

    raw = read_bytes(path, "pool file", MAX_ARTEFACT_BYTES)
    if decode(raw[:4096], path).lstrip().startswith("{"):
        from ci_eval.inputs.artefact_stream import read_rankings

        return read_rankings(raw, path)
    from ci_eval.core.measure.ranking import order
    from ci_eval.trec.parse import read_run_pairs

    return {qid: list(order(pairs).ids) for qid, pairs in read_run_pairs(path).items()}


def retriever_rankings(config, questions: Sequence[tuple[str, str]], known_ids=None):
    """The configured retriever's rankings for ``(id, text)`` questions, and the failures."""
    from ci_eval.retrieval.query import Query, runner_for

    queries = [Query(qid, text) for qid, text in questions]
    rankings, failures = {}, {}
    for qid, result in runner_for(config.retriever.type)(config, queries, known_ids):
        if result.failed:
            failures[qid] = result.error
        rankings[qid] = list(result.ids)
    return rankings, failures


def _clip(text) -> str:
    text = str(text)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _jsonl_texts(path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for n, item in read_json_lines(path, "chunks file"):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("text"), str):
            raise InputError('expected {"id": "...", "text": "..."}', path, f"line {n}")
        out[item["id"]] = _clip(item["text"])
    return out


def _call_user(fn, what: str, source: str, *args, place: str | None = None):
    """The user's function called so that raising, ``sys.exit`` and ``os._exit`` are all a
    one-line error naming it, never the label page ending with exit 0."""
    from ci_eval.inputs.pyimport import describe_failure, os_exit_raises

    try:
        with os_exit_raises():
            return fn(*args)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's code, sys.exit included
        raise InputError(f"{what} {describe_failure(exc)}", source, place) from None


def _callable_texts(spec: str) -> Callable[[list[str]], dict[str, str]]:
    from ci_eval.inputs.pyimport import import_target

    fn = import_target(spec, "--chunks", spec)

    def lookup(ids: list[str]) -> dict[str, str]:
        got = _call_user(fn, spec, "--chunks", list(ids))
        if isinstance(got, dict):
            return {str(k): _clip(v) for k, v in got.items() if v is not None}
        if not isinstance(got, (list, tuple)) or len(got) != len(ids):
            raise InputError(f"{spec} must return a dict or a list of {len(ids)} texts", "--chunks")
        return {i: _clip(t) for i, t in zip(ids, got) if t is not None}

    return lookup


def _manifest_texts(config) -> dict[str, str]:
    """The ``text`` map of the index manifest (``{"version", "ids", "text": {id: text}}``)."""
    data = None
    if config is not None and config.manifest_callable:
        from ci_eval.inputs.index_process import call_index

        data = call_index(config)
    elif config is not None and config.manifest:
        raw = decode(read_bytes(config.manifest, "index manifest"), config.manifest)
        data = json.loads(raw) if raw.lstrip().startswith("{") else None
    texts = data.get("text") if isinstance(data, dict) else None
    if not isinstance(texts, dict):
        raise InputError('no chunk text: give --chunks (a JSONL file or module:function), or a "text" '
                         "map in the index manifest", "--chunks")
    return {str(k): _clip(v) for k, v in texts.items() if isinstance(v, str)}


def text_lookup(spec: str | None, config) -> Callable[[list[str]], dict[str, str]]:
    """``ids -> {id: text}`` from ``--chunks`` (a file path or ``module:function``) or the manifest."""
    if spec is None:
        table = _manifest_texts(config)
    elif os.path.exists(spec) or ":" not in spec:
        table = _jsonl_texts(spec)
    else:
        return _callable_texts(spec)
    return lambda ids: {i: table[i] for i in ids if i in table}


def read_candidates(path: str) -> list[str]:
    """``{"question": "..."}`` per line: mined queries or a generator's output."""
    out = []
    for n, item in read_json_lines(path, "candidates file"):
        question = item.get("question") if isinstance(item, dict) else None
        if not isinstance(question, str) or not question.strip():
            raise InputError('expected {"question": "..."} with a non-empty question', path, f"line {n}")
        if len(question) > 10000:
            raise InputError("question longer than 10000 characters", path, f"line {n}")
        out.append(" ".join(question.split()))
    return out
