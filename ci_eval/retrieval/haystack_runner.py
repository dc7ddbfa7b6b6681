"""Retriever type ``haystack``: a retriever component (anything whose ``run(query=...)``
returns ``{"documents": [...]}``), a ``Pipeline``, or a function returning one; ids and
scores from ``Document.id`` and ``Document.score``. haystack-ai is imported only when this
type is used."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence

from ci_eval.core.results import ResultError, Retrieved
from ci_eval.errors import InputError
from ci_eval.retrieval.extract import ranked
from ci_eval.retrieval.framework import require, resolve_target, run_search
from ci_eval.retrieval.query import Query

# Unconnected pipeline inputs that receive the question: retrievers take "query", text
# embedders "text". Every unconnected "top_k" is told the depth.
_QUESTION_INPUTS = ("query", "text")


def _component_call(component) -> Callable[[str, int, dict], dict]:
    takes_top_k = "top_k" in inspect.signature(component.run).parameters

    def call(question: str, depth: int, params: dict) -> dict:
        extra = {"top_k": depth} if takes_top_k else {}
        return component.run(query=question, **{**extra, **params})

    return call


def _pipeline_call(pipeline, config) -> Callable[[str, int, dict], dict]:
    document_outputs = [name for name, sockets in pipeline.outputs().items() if "documents" in sockets]
    if len(document_outputs) != 1:
        found = ", ".join(document_outputs) or "none"
        raise InputError(f"the pipeline needs exactly one component with a \"documents\" output (found: {found})",
                         config.source, "retriever.target")
    inputs = pipeline.inputs()
    if not any(socket in sockets for sockets in inputs.values() for socket in _QUESTION_INPUTS):
        raise InputError('the pipeline has no unconnected "query" or "text" input for the question',
                         config.source, "retriever.target")
    (output,) = document_outputs

    def call(question: str, depth: int, params: dict) -> dict:
        data = {}
        for name, sockets in inputs.items():
            given = {s: question for s in _QUESTION_INPUTS if s in sockets}
            if "top_k" in sockets:
                given["top_k"] = depth
            data[name] = {**given, **params.get(name, {})}
        return pipeline.run(data)[output]

    return call


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    require("haystack", "haystack-ai", config)
    from haystack.core.pipeline.base import PipelineBase

    def accepts(obj) -> bool:
        return isinstance(obj, PipelineBase) or (hasattr(obj, "__haystack_input__") and hasattr(obj, "run"))

    obj = resolve_target(config, accepts, "a Haystack retriever component or Pipeline")
    call = _pipeline_call(obj, config) if isinstance(obj, PipelineBase) else _component_call(obj)
    r = config.retriever

    def search(question: str, depth: int, **params) -> list:
        out = call(question, depth, params)
        if not isinstance(out, dict) or not isinstance(out.get("documents"), list):
            raise ResultError('expected {"documents": [...]} from the retriever')
        return ranked(((d, getattr(d, "score", None)) for d in out["documents"][:depth]), r.id_from, r.score)

    return run_search(config, search, queries, known_ids)
