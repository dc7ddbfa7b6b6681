"""What the framework retriever types (langchain, llamaindex, haystack) share: their
package imported only when the type is used, the user's object resolved from ``target``,
and the run itself on the ``python`` type's worker pool (timeouts, concurrency, latency)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

from ci_eval.core.artefact.results import Retrieved
from ci_eval.errors import InputError, InputErrors
from ci_eval.retrieval.query import Query


def require(module: str, package: str, config) -> ModuleType:
    """The framework is not a dependency of ci-eval: a missing one is bad input at
    ``retriever.type``, with the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InputError(
            f'retriever type "{config.retriever.type}" needs the {package} package ({exc}); '
            f"install it where ci-eval runs: pip install {package}",
            config.source,
            "retriever.type",
        ) from None


def require_installed(module: str, package: str, config) -> None:
    """``require`` without the import when the package is there: the worker process imports
    the framework anyway (and says ``require``'s words if that import fails), so this
    process only looks for it, which saves the import (2.7 s for llama_index.core here)."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        require(module, package, config)  # fails, in the import's own words


def resolve_target(config, accepts: Callable[[Any], bool], expected: str) -> Any:
    """``target`` names the object, or a function of no arguments returning it (so building
    an index can wait until ci-eval runs)."""
    from ci_eval.inputs.pyimport import import_object

    r = config.retriever
    obj = import_object(r.target, config.source, "retriever.target", config.base_dir)
    if accepts(obj):
        return obj
    if callable(obj) and not isinstance(obj, type):
        built = _build(obj, r.target)
        if accepts(built):
            return built
        obj = built
    raise InputError(f"{r.target!r} is a {type(obj).__name__}, expected {expected} (or a function returning one)",
                     config.source, "retriever.target")


def _build(factory: Callable[[], Any], target: str) -> Any:
    """The user's factory called with every way out of it a failed retriever (exit 4):
    ``raise SystemExit`` on a missing API key, ``sys.exit(0)`` and ``os._exit(0)`` included,
    which would otherwise end ci-eval with exit 0 and nothing written."""
    from ci_eval.errors import RetrieverError
    from ci_eval.inputs.pyimport import describe_failure, os_exit_raises

    try:
        with os_exit_raises():
            return factory()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's factory: nothing can be retrieved
        raise RetrieverError(f"{target}() {describe_failure(exc)}") from None


def run_search(config, search: Callable[..., list], queries: Sequence[Query],
               known_ids) -> Iterator[tuple[str, Retrieved]]:
    """``search(question, depth, **params) -> [(id, score)]`` on every question, as the python
    type runs a callable: each failure (a missing id included) is an error on that question."""
    from ci_eval.retrieval.python_runner import run_callable

    r = config.retriever
    return run_callable(search, queries, r.depth, r.params, r.concurrency, r.timeout,
                        r.total_timeout, known_ids)


def refuse_params(config, refused: dict[str, str]) -> None:
    """``params`` the framework object would not receive (``{name: why}``): bad input at
    each one's place, all at once, before any question is asked. A parameter that is
    recorded in the artefact but has no effect would show as a change that changed nothing."""
    if refused:
        raise InputErrors([InputError(f"{name!r} {why}", config.source, f"retriever.params.{name}")
                           for name, why in refused.items()])


def depth_knob(config, knob: str) -> dict[str, str]:
    """The framework's own way to ask for the depth is ci-eval's to set: in ``params`` it
    would be overridden or would override the depth the artefact records."""
    if knob not in config.retriever.params:
        return {}
    return {knob: f"is how ci-eval asks for the depth ({config.retriever.depth}): set retriever.depth "
                  "instead (its default is 3k)"}


def keywords_of(fn: Callable) -> tuple[set[str], bool]:
    """The keyword arguments ``fn`` names, and whether it takes any others (``**kwargs``)."""
    import inspect

    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: cannot tell, let it try
        return set(), True
    named = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return named, any(p.kind is p.VAR_KEYWORD for p in parameters)
