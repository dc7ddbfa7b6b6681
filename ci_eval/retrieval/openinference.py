"""``run-file`` with ``format = "openinference"``: the retrieval spans an app traced with
OpenInference (Phoenix, Arize, any OpenTelemetry exporter), read as a run.

One JSON value per line, in any of the shapes those exports take:
- an OTLP/JSON batch (``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``, what an
  OpenTelemetry Collector's file exporter writes), attributes as ``{"key", "value"}`` lists;
- one span with flat dotted attributes (``{"attributes": {"openinference.span.kind": ...}}``,
  the OpenTelemetry SDK's ``span.to_json()``), or nested ones (Phoenix's attribute view);
- one row of a Phoenix spans dataframe (``"attributes.input.value"``, ``span_kind``).

A span counts when its ``openinference.span.kind`` is ``RETRIEVER``. Its documents are
``retrieval.documents.N.document.id`` / ``.score``; ``id_from = "metadata.<key>"`` reads the
id from ``.document.metadata`` instead (OpenInference's LangChain instrumentation records no
document id, only content and metadata), and unscored documents keep the traced order as
rank scores. It belongs to the gold question whose id
is its ``metadata`` ``question_id`` (``using_metadata({"question_id": ...})``) or its
``ci_eval.question_id`` attribute, else to the question whose text is exactly its
``input.value``. Spans of no gold question are other traffic and are skipped. Several
outermost RETRIEVER spans of one question under one trace are its calls (multi-step
retrieval, core/measure/stages.py), scored per call and as a whole.

A ``RERANKER`` span in the same trace as a question's retrieval (or naming the question by
its metadata, its ``reranker.query`` or its ``input.value``) reranks it: the question's
answer then has two stages, ``retriever`` (the retrieval span's documents) and
``reranker`` (the span's ``reranker.output_documents``), and its final list is the
reranker's output, which is what the app passes on. ``[[stages]]`` names them to have them
measured. One reranker per question; a reranked multi-call retrieval is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ci_eval.errors import InputError
from ci_eval.retrieval.query import Query

RETRIEVED, RERANKED = "retrieval.documents", "reranker.output_documents"
_DOCUMENT = {prefix: re.compile(rf"^{re.escape(prefix)}\.(\d+)\.document\.(.+)$") for prefix in (RETRIEVED, RERANKED)}
# The stage names a reranked question's answer carries (``[[stages]]`` names them).
RETRIEVER_STAGE, RERANKER_STAGE = "retriever", "reranker"
_QUESTION_ID_KEYS = ("metadata.question_id", "ci_eval.question_id")


@dataclass(frozen=True)
class _Span:
    line: int
    trace: object
    span: object
    parent: object
    results: list


class _Shape(Exception):
    """A span field of the wrong shape; the line that holds it is added by _collect."""


def _clip(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:24]}...{text[-8:]}"


_INT64 = re.compile(r"-?\d{1,19}")


def _otlp_int(raw) -> int:
    # OTLP/JSON writes an int64 as a decimal string (a number from some exporters).
    if type(raw) is int or (isinstance(raw, str) and _INT64.fullmatch(raw)):
        value = int(raw)
        if -(1 << 63) <= value < 1 << 63:
            return value
    raise _Shape(f"intValue {_clip(raw)} is not a 64-bit integer")


def _otlp_values(holder, kind: str) -> list:
    values = (holder or {}).get("values", []) if isinstance(holder, dict) or holder is None else None
    if not isinstance(values, list):
        raise _Shape(f"{kind} must be an object with a list of values")
    return values


def _key(kv: dict, kind: str) -> str:
    key = kv.get("key")
    if not isinstance(key, str):
        raise _Shape(f"{kind} key {_clip(key)} is not a string")
    return key


def _otlp_value(value):
    """OTLP/JSON's typed ``AnyValue`` to a plain value (int64 arrives as a string)."""
    if not isinstance(value, dict):
        return value
    for kind in ("stringValue", "boolValue", "doubleValue"):
        if kind in value:
            return value[kind]
    if "intValue" in value:
        return _otlp_int(value["intValue"])
    if "arrayValue" in value:
        return [_otlp_value(v) for v in _otlp_values(value["arrayValue"], "arrayValue")]
    if "kvlistValue" in value:
        return {_key(kv, "a kvlistValue"): _otlp_value(kv.get("value"))
                for kv in _otlp_values(value["kvlistValue"], "kvlistValue") if isinstance(kv, dict)}
    return None


def _flatten(value, prefix: str, out: dict) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(inner, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and prefix.endswith("documents"):
        for i, inner in enumerate(value):
            _flatten(inner, f"{prefix}.{i}", out)
    elif prefix == "metadata" and isinstance(value, str):
        try:  # OpenInference records metadata as a JSON string
            _flatten(json.loads(value), prefix, out)
        except (ValueError, RecursionError):
            out[prefix] = value
    else:
        out[prefix] = value


def attributes(span: dict) -> dict:
    """A span's attributes as one flat ``{"dotted.key": value}`` map, whatever its shape."""
    raw = span.get("attributes")
    if isinstance(raw, list):  # OTLP/JSON
        raw = {_key(kv, "an attribute"): _otlp_value(kv.get("value")) for kv in raw if isinstance(kv, dict)}
    raw = dict(raw) if isinstance(raw, dict) else {}
    raw.update({k[len("attributes."):]: v for k, v in span.items() if k.startswith("attributes.")})
    flat: dict = {}
    _flatten(raw, "", flat)
    if "span_kind" in span:
        flat.setdefault("openinference.span.kind", span["span_kind"])
    return flat


def _listed(holder: dict, key: str) -> list:
    value = holder.get(key)
    if value is not None and not isinstance(value, list):
        raise _Shape(f"{key} must be a list")
    return value or []


def _spans_of(msg) -> list:
    if isinstance(msg, dict) and isinstance(msg.get("resourceSpans"), list):
        return [span for resource in msg["resourceSpans"] if isinstance(resource, dict)
                for scope in _listed(resource, "scopeSpans") if isinstance(scope, dict)
                for span in _listed(scope, "spans")]
    return [msg]


def _ids(span: dict) -> tuple:
    context = span.get("context") if isinstance(span.get("context"), dict) else {}
    trace = span.get("traceId") or context.get("trace_id") or span.get("context.trace_id")
    own = span.get("spanId") or context.get("span_id") or span.get("context.span_id")
    parent = span.get("parentSpanId") or span.get("parent_id")
    for name, value in (("traceId", trace), ("spanId", own), ("parentSpanId", parent)):
        if value is not None and not isinstance(value, str) and type(value) is not int:
            raise _Shape(f"{name} {_clip(value)} is not a string")
    return trace, own, parent


def _document_fields(flat: dict, prefix: str = RETRIEVED) -> list[dict]:
    """``retrieval.documents.N.document.*`` (or another ``prefix``'s) -> one ``{"id",
    "score", "metadata"}`` per N, in N's order. Document metadata is a JSON string in
    OpenInference, an object once nested."""
    found: dict[int, dict] = {}
    pattern = _DOCUMENT[prefix]
    for key, value in flat.items():
        match = pattern.match(key)
        if not match:
            continue
        if len(match.group(1)) > 9:
            raise _Shape(f"document index {_clip(match.group(1))} is too large")
        doc = found.setdefault(int(match.group(1)), {"metadata": {}})
        field = match.group(2)
        if field == "metadata" and isinstance(value, str):
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                parsed = {}
            doc["metadata"].update(parsed if isinstance(parsed, dict) else {})
        elif field.startswith("metadata."):
            doc["metadata"][field[len("metadata."):]] = value
        elif field in ("id", "score"):
            doc[field] = value
    return [found[i] for i in sorted(found)]


def _documents(flat: dict, id_from: str, score: str, path: str, place: str, prefix: str = RETRIEVED) -> list:
    from ci_eval.core.artefact.results import ResultError
    from ci_eval.retrieval.extract import ranked

    docs = _document_fields(flat, prefix)
    what = "retrieval" if prefix == RETRIEVED else "reranker"
    try:
        pairs = ranked([(d, d.get("score")) for d in docs], id_from, score)
    except ResultError as exc:
        raise InputError(f"{what} {exc}".replace("result ", "document ", 1), path, place) from None
    return [{"id": cid, "score": value} for cid, value in pairs]


def _question_of(flat: dict, by_id: dict, by_text: dict, texts=("input.value",)):
    for key in _QUESTION_ID_KEYS:
        if flat.get(key) is not None:
            return by_id.get(str(flat[key]))
    for key in texts:
        text = flat.get(key)
        if isinstance(text, str) and text in by_text:
            return by_text[text]
    return None


@dataclass
class _Collected:
    retrievals: dict  # question id -> [_Span]
    rerankers: list  # (question id or None, _Span): None when only its trace can tell


def _collect(text: str, queries: Sequence[Query], path: str, id_from: str, score: str) -> _Collected:
    by_id = {q.id: q.id for q in queries}
    by_text: dict[str, str] = {}
    for q in queries:
        by_text.setdefault(q.question, q.id)
    found = _Collected({}, [])
    from ci_eval.inputs.files import json_lines

    for n, msg in json_lines(text, path):
        if isinstance(msg, InputError):  # not JSON: the first bad line is the error
            raise msg
        try:
            for kind, qid, span in _traced(msg, by_id, by_text, path, n, id_from, score):
                if kind == "RERANKER":
                    found.rerankers.append((qid, span))
                elif qid is not None:
                    found.retrievals.setdefault(qid, []).append(span)
        except _Shape as exc:
            raise InputError(str(exc), path, f"line {n}") from None
        except RecursionError:
            raise InputError("a span nested too deeply", path, f"line {n}") from None
    return found


def _retriever_spans(msg, path: str, n: int, kinds=("RETRIEVER",)):
    """``(kind, span, its flat attributes)`` for each span of line ``n``'s message whose
    kind is one of ``kinds``."""
    for span in _spans_of(msg):
        if not isinstance(span, dict):
            raise InputError("expected a span object or an OTLP export with resourceSpans", path, f"line {n}")
        flat = attributes(span)
        kind = str(flat.get("openinference.span.kind", "")).upper()
        if kind in kinds:
            yield kind, span, flat


def _traced(msg, by_id: dict, by_text: dict, path: str, n: int, id_from: str, score: str):
    """``(kind, question id or None, _Span)`` for each retrieval and rerank span of line ``n``."""
    for kind, span, flat in _retriever_spans(msg, path, n, ("RETRIEVER", "RERANKER")):
        if kind == "RETRIEVER":
            qid = _question_of(flat, by_id, by_text)
            if qid is not None:
                yield kind, qid, _Span(n, *_ids(span), _documents(flat, id_from, score, path, f"line {n}"))
        else:
            qid = _question_of(flat, by_id, by_text, ("reranker.query", "input.value"))
            yield kind, qid, _Span(n, *_ids(span), _documents(flat, id_from, score, path, f"line {n}", RERANKED))


def _loop(qid: str, found: list[_Span], path: str) -> None:
    """Refuse a span that is its own ancestor (a parentSpanId chain that loops back):
    no span of such a chain is outermost. Each span is walked once: a walk stops at a span
    already known to lead out of the chain."""
    by_span = {s.span: i for i, s in enumerate(found) if s.span is not None}
    settled: set[int] = set()
    for start in range(len(found)):
        walk: list[int] = []
        at = start
        while at is not None and at not in settled:
            if at in walk:
                s = found[at]
                raise InputError(f"question {qid!r}: retrieval span {s.span!r} is its own ancestor "
                                 "(its parentSpanId chain loops back to it)", path, f"line {s.line}")
            walk.append(at)
            at = by_span.get(found[at].parent) if found[at].parent is not None else None
        settled.update(walk)


def _outermost(qid: str, found: list[_Span], path: str) -> list[_Span]:
    """The question's retrievals. A retriever made of retrievers (an ensemble, a hybrid)
    traces nested RETRIEVER spans for one question: the outermost holds the final ranking.
    Several outermost ones under one trace are the calls of a multi-step retrieval (an
    agent that searched twice), in the order the file holds them; under several traces the
    question was traced more than once, which is refused."""
    _loop(qid, found, path)
    ids = {s.span for s in found if s.span}
    top = [s for s in found if not (s.parent and s.parent in ids)]
    if len(top) > 1 and top[0].trace is not None and all(s.trace == top[0].trace for s in top):
        return top
    if len(top) != 1:
        lines = ", ".join(str(s.line) for s in top)
        raise InputError(f"question {qid!r} has {len(top)} separate retrieval spans (lines {lines}): "
                         "trace each gold question once", path, f"line {top[-1].line}")
    return top


def read_spans(path: str, queries: Sequence[Query], id_from: str = "id", score: str = "similarity") -> dict[str, list]:
    """The traced run: gold question id -> ``[{"id", "score"}]``, the traced ranking, or
    ``{"calls": [ranking, ...]}`` for a question retrieved in several calls under one trace."""
    from ci_eval.inputs.files import decode, read_bytes
    from ci_eval.retrieval.run_file_checks import check_results

    text = decode(read_bytes(path, "trace file"), path)
    collected = _collect(text, queries, path, id_from, score)
    run = {}
    for qid, found in collected.retrievals.items():
        spans = _outermost(qid, found, path)
        for span in spans:
            check_results(qid, span.results, path, f"line {span.line}")
        reranked = _reranker_of(qid, spans, collected.rerankers, path)
        if reranked is not None:
            check_results(qid, reranked.results, path, f"line {reranked.line}")
            run[qid] = {"stages": {RETRIEVER_STAGE: spans[0].results, RERANKER_STAGE: reranked.results},
                        "results": reranked.results}
        else:
            run[qid] = spans[0].results if len(spans) == 1 else {"calls": [span.results for span in spans]}
    return run


def _reranker_of(qid: str, spans: list[_Span], rerankers: list, path: str) -> _Span | None:
    """The rerank span of the question: one that names it, or one in its retrieval's trace
    that names no question."""
    trace = spans[0].trace
    mine = [span for named, span in rerankers
            if named == qid or (named is None and trace is not None and span.trace == trace)]
    if not mine:
        return None
    if len(mine) > 1:
        lines = ", ".join(str(span.line) for span in mine)
        raise InputError(f"question {qid!r} has {len(mine)} reranker spans (lines {lines}): one reranker "
                         "per question is read", path, f"line {mine[-1].line}")
    if len(spans) > 1:
        raise InputError(f"question {qid!r} was retrieved in {len(spans)} calls and reranked: a reranked "
                         "multi-call retrieval is not read; trace the calls or the rerank", path,
                         f"line {mine[0].line}")
    return mine[0]


def asked_questions(text: str, path: str):
    """``(line, question)`` for every retrieval span's ``input.value``, gold question or not:
    what users asked, for ``ci-eval gold mine``. Spans of other kinds are skipped."""
    from ci_eval.inputs.files import json_lines

    for n, msg in json_lines(text, path):
        if isinstance(msg, InputError):
            raise msg
        try:
            for _, _, flat in _retriever_spans(msg, path, n):
                value = flat.get("input.value")
                if isinstance(value, str) and value.strip():
                    yield n, value
        except _Shape as exc:
            raise InputError(str(exc), path, f"line {n}") from None
        except RecursionError:
            raise InputError("a span nested too deeply", path, f"line {n}") from None
