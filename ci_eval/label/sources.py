"""Where the pool and the chunk texts come from: run artefacts and TREC run files given with
``--pool``, the configured retriever, and the manifest's ``text``, a JSONL chunks file or a
``module:function(ids) -> texts`` callable."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ci_eval.core.limits import MAX_QUESTION_CHARS
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
    from ci_eval.core.measure.trec_order import order
    from ci_eval.trec.parse import read_run_pairs

    return {qid: list(order(pairs).ids) for qid, pairs in read_run_pairs(path).items()}


def retriever_rankings(config, questions: Sequence[tuple[str, str]], known_ids=None):
    """The configured retriever's rankings for ``(id, text)`` questions, and the failures."""
    from ci_eval.retrieval.pipeline import runner_for
    from ci_eval.retrieval.query import Query

    queries = [Query(qid, text) for qid, text in questions]
    rankings, failures = {}, {}
    for qid, result in runner_for(config.retriever.type)(config, queries, known_ids):
        if result.failed:
            failures[qid] = result.error
        rankings[qid] = list(result.ids)
    return rankings, failures


@dataclass(frozen=True)
class Place:
    """Where a chunk's shown text sits in its document: the document's characters
    ``start``..``start + length`` are the shown text's from ``at`` on (``at`` is 0 unless
    the text shown begins with something the document does not have, such as a heading)."""

    doc: str
    start: int
    length: int
    at: int = 0

    def as_dict(self) -> dict:
        return {"doc": self.doc, "start": self.start, "length": self.length, "at": self.at}


class Texts(dict):
    """``{id: text}``, and in ``places`` for each id either its Place or the one-line reason
    the page cannot record a span of it."""

    def __init__(self, texts=(), places=None):
        super().__init__(texts)
        self.places: dict[str, Place | str] = dict(places or {})


NO_PLACE_CALLABLE = "the --chunks function gives texts only, not where they sit in their documents"
NO_PLACE_FILE = 'its line in the chunks file has no "doc" and "start"'
NO_PLACE_MANIFEST = 'its manifest entry has no "doc" and "start"'


def place_of(item: dict, text: str, missing: str) -> Place | str:
    """A chunk's Place from its ``doc``, ``start`` (and ``end``) beside its full text, or
    why there is none. A span that does not match the text's length is not trusted."""
    doc, start, end = item.get("doc"), item.get("start"), item.get("end")
    if not isinstance(doc, str) or not doc or isinstance(start, bool) or not isinstance(start, int) or start < 0:
        return missing
    if end is not None and (isinstance(end, bool) or not isinstance(end, int) or end - start != len(text)):
        return f"its span {start}..{end} is not as long as its text ({len(text)} characters)"
    shown = len(text) if len(text) <= MAX_TEXT else MAX_TEXT - 1  # the clipped text's own characters
    return Place(doc, start, shown)


def _clip(text) -> str:
    text = str(text)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _jsonl_texts(path: str) -> Texts:
    """``{"id", "text"}`` a line; ``doc`` and ``start`` (and ``end``) too place the text in
    its document, so a span of it can be recorded."""
    out = Texts()
    for n, item in read_json_lines(path, "chunks file"):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(item.get("text"), str):
            raise InputError('expected {"id": "...", "text": "..."}', path, f"line {n}")
        out[item["id"]] = _clip(item["text"])
        out.places[item["id"]] = place_of(item, item["text"], NO_PLACE_FILE)
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

    def lookup(ids: list[str]) -> Texts:
        got = _call_user(fn, spec, "--chunks", list(ids))
        if isinstance(got, dict):
            texts = {str(k): _clip(v) for k, v in got.items() if v is not None}
        elif not isinstance(got, (list, tuple)) or len(got) != len(ids):
            raise InputError(f"{spec} must return a dict or a list of {len(ids)} texts", "--chunks")
        else:
            texts = {i: _clip(t) for i, t in zip(ids, got) if t is not None}
        return Texts(texts, dict.fromkeys(texts, NO_PLACE_CALLABLE))

    return lookup


def _manifest_texts(config) -> Texts:
    """The ``text`` map of the index manifest (``{"version", "ids", "text": {id: text}}``),
    or the texts of its chunk entries (``{"version", "chunks": [{"id", "doc", "start",
    "end", "text"}]}``), placed in their documents."""
    data = None
    if config is not None and config.manifest_callable:
        from ci_eval.inputs.index_process import call_index

        data = call_index(config)
    elif config is not None and config.manifest:
        raw = decode(read_bytes(config.manifest, "index manifest"), config.manifest)
        data = json.loads(raw) if raw.lstrip().startswith("{") else None
    texts = data.get("text") if isinstance(data, dict) else None
    entries = data.get("chunks") if isinstance(data, dict) else None
    if not isinstance(texts, dict) and isinstance(entries, list):
        out = Texts()
        for item in entries:
            if isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("text"), str):
                out[item["id"]] = _clip(item["text"])
                out.places[item["id"]] = place_of(item, item["text"], NO_PLACE_MANIFEST)
        if out:
            return out
    if not isinstance(texts, dict):
        raise InputError('no chunk text: give --chunks (a JSONL file or module:function), or a "text" '
                         "map in the index manifest", "--chunks")
    table = {str(k): _clip(v) for k, v in texts.items() if isinstance(v, str)}
    return Texts(table, dict.fromkeys(table, 'the manifest\'s "text" map does not say where the chunk sits in its document'))


def text_lookup(spec: str | None, config) -> Callable[[list[str]], Texts]:
    """``ids -> {id: text}`` from ``--chunks`` (a file path or ``module:function``) or the
    manifest; the answer's ``places`` say where each text sits in its document, when known."""
    if spec is None:
        table = _manifest_texts(config)
    elif os.path.exists(spec) or ":" not in spec:
        table = _jsonl_texts(spec)
    else:
        return _callable_texts(spec)
    return lambda ids: Texts({i: table[i] for i in ids if i in table},
                             {i: table.places[i] for i in ids if i in table.places})


def candidate_origins(path: str) -> dict[str, dict]:
    """Each candidate's ``origin`` (core/gold/origin.py) by candidate id, for the lines that
    give one: what a keep records of where the question came from."""
    from ci_eval.core.gold.candidates import candidate_id
    from ci_eval.core.gold.origin import clean_origin

    out = {}
    for _, item in read_json_lines(path, "candidates file"):
        origin = clean_origin(item.get("origin")) if isinstance(item, dict) else None
        if origin and isinstance(item.get("question"), str):
            out.setdefault(candidate_id(" ".join(item["question"].split())), origin)
    return out


def read_candidates(path: str) -> list[str]:
    """``{"question": "..."}`` per line: mined queries or a generator's output."""
    out = []
    for n, item in read_json_lines(path, "candidates file"):
        question = item.get("question") if isinstance(item, dict) else None
        if not isinstance(question, str) or not question.strip():
            raise InputError('expected {"question": "..."} with a non-empty question', path, f"line {n}")
        if len(question) > MAX_QUESTION_CHARS:
            raise InputError(f"question longer than {MAX_QUESTION_CHARS} characters", path, f"line {n}")
        out.append(" ".join(question.split()))
    return out
