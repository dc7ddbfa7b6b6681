"""Retriever type ``haystack``: a retriever component (anything whose ``run(query=...)``
returns ``{"documents": [...]}``), a ``Pipeline``, or a function returning one; ids and
scores from ``Document.id`` and ``Document.score``. haystack-ai is imported only when this
type is used.

The depth is asked through ``top_k``. ``params`` are the component's ``run`` arguments, or for
a pipeline ``{component = {input = value}}`` over its unconnected inputs; one the object
would not take, ``top_k`` or the question's input is refused (exit 2).

A pipeline's stages are its components: a ``[[stages]]`` name that is a component with a
``documents`` output (a retriever before a ranker, say) is read from the pipeline's run
(``include_outputs_from``), that component's documents the stage's ranked list; a name
that is no such component is refused at its place (docs/stages.md)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence

from ci_eval.core.artefact.results import ResultError, Retrieved
from ci_eval.errors import InputError
from ci_eval.retrieval.extract import ranked
from ci_eval.retrieval.framework import depth_knob, keywords_of, refuse_params, require, resolve_target, run_search
from ci_eval.retrieval.query import Query

# Unconnected pipeline inputs that receive the question: retrievers take "query", text
# embedders "text". Every unconnected "top_k" is told the depth.
_QUESTION_INPUTS = ("query", "text")


def _component_call(component, config) -> Callable[[str, int, dict], dict]:
    takes_top_k = "top_k" in inspect.signature(component.run).parameters
    named, any_other = keywords_of(component.run)
    refuse_params(config, depth_knob(config, "top_k") | {
        name: f"is not an argument of {type(component).__name__}.run "
              f"(it takes {', '.join(sorted(named - {'query', 'top_k'})) or 'none'})"
        for name in config.retriever.params if name == "query" or (name not in named and not any_other)})

    def call(question: str, depth: int, params: dict) -> dict:
        extra = {"top_k": depth} if takes_top_k else {}
        return component.run(query=question, **{**extra, **params})

    return call


def _pipeline_params(inputs: dict, config) -> dict[str, str]:
    """Params of a pipeline are ``{component = {input = value}}`` for its unconnected inputs;
    any other would be dropped or refused by the pipeline only once a question is asked."""
    refused = {}
    for name, given in config.retriever.params.items():
        if name not in inputs:
            refused[name] = (f"is not a component of the pipeline with an unconnected input "
                             f"(they are: {', '.join(sorted(inputs)) or 'none'})")
        elif not isinstance(given, dict):
            refused[name] = "must be a table of that component's inputs, e.g. { top_k = 5 } under its name"
        else:
            for socket in given:
                if socket == "top_k" or socket in _QUESTION_INPUTS:
                    refused[f"{name}.{socket}"] = "is set by ci-eval (the question, or the depth: set retriever.depth)"
                elif socket not in inputs[name]:
                    refused[f"{name}.{socket}"] = (f"is not an unconnected input of {name!r} "
                                                   f"(it has {', '.join(sorted(inputs[name]))})")
    return refused


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
    refuse_params(config, _pipeline_params(inputs, config))
    staged = _stage_components(pipeline, config)

    def call(question: str, depth: int, params: dict) -> dict:
        data = {}
        for name, sockets in inputs.items():
            given = {s: question for s in _QUESTION_INPUTS if s in sockets}
            if "top_k" in sockets:
                given["top_k"] = depth
            data[name] = {**given, **params.get(name, {})}
        if not staged:
            return pipeline.run(data)[output]
        ran = pipeline.run(data, include_outputs_from=set(staged))
        # a component that did not run for this question (a branch not taken) is a stage the
        # answer lacks: skipped for the question, as any answer's missing stage is
        return {**ran[output], "stages": {name: ran[name]["documents"] for name in staged
                                          if isinstance(ran.get(name), dict) and "documents" in ran[name]}}

    return call


def _stage_components(pipeline, config) -> list[str]:
    """The ``[[stages]]`` read from the answer, each a component of the pipeline with a
    ``documents`` output; any other name is bad input at its place."""
    from ci_eval.core.measure.stages import FINAL

    outputs = pipeline.outputs(include_components_with_connected_outputs=True)
    listing = sorted(name for name, sockets in outputs.items() if "documents" in sockets)
    staged = []
    for spec in config.stages:
        if spec.chars is not None or spec.name == FINAL:
            continue  # packed from the final list, or the final list itself
        if spec.name not in listing:
            raise InputError(f"stage {spec.name!r} is not a component of the pipeline with a \"documents\" "
                             f"output (they are: {', '.join(listing)})", config.source, "stages")
        staged.append(spec.name)
    return staged


def prepare(config) -> Callable:
    """The object ``target`` names (built by its factory), checked and ready to ask: what
    `run` does before the first question, and what `check` does in its place."""
    require("haystack", "haystack-ai", config)
    from haystack.core.pipeline.base import PipelineBase

    def accepts(obj) -> bool:
        return isinstance(obj, PipelineBase) or (hasattr(obj, "__haystack_input__") and hasattr(obj, "run"))

    obj = resolve_target(config, accepts, "a Haystack retriever component or Pipeline")
    call = _pipeline_call(obj, config) if isinstance(obj, PipelineBase) else _component_call(obj, config)
    r = config.retriever

    def ranked_documents(documents, cut: int | None = None) -> list:
        return ranked(((d, getattr(d, "score", None)) for d in documents[:cut]), r.id_from, r.score)

    def search(question: str, depth: int, **params):
        out = call(question, depth, params)
        if not isinstance(out, dict) or not isinstance(out.get("documents"), list):
            raise ResultError('expected {"documents": [...]} from the retriever')
        final = ranked_documents(out["documents"], depth)
        if "stages" not in out:
            return final
        stages = {}
        for name, documents in out["stages"].items():
            if not isinstance(documents, list):
                raise ResultError(f'expected {{"documents": [...]}} from the pipeline\'s component {name!r}')
            stages[name] = ranked_documents(documents)
        return {"stages": stages, "results": final}

    return search


def runner(config, queries: Sequence[Query], known_ids) -> Iterator[tuple[str, Retrieved]]:
    return run_search(config, prepare(config), queries, known_ids)
