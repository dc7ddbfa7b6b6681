"""Ids and scores out of the objects frameworks return, one way for every retriever type.

``id_from`` says where a result's chunk id sits: ``id`` (LangChain and Haystack
``Document.id``), ``node_id`` or ``ref_doc_id`` (LlamaIndex nodes), or ``metadata.<key>``
(LangChain's ``metadata``, Haystack's ``meta``, LlamaIndex's node metadata, a Qdrant
point's ``payload``). ``score`` says
what a number means: a ``similarity`` (higher is better) or a ``distance`` (lower is better,
so it is negated before ranking: Chroma and pgvector return distances, and taking them as
similarities would invert the ranking).

A result without an id is an unusable answer (ResultError, so an error on that question),
never a miss: a silent miss would read as a retrieval regression.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ci_eval.core.artefact.results import ResultError, rank_scores

_MISSING = object()


def _field(obj: Any, name: str) -> Any:
    """``obj.name`` or ``obj[name]``; then the same on ``obj.node`` (LlamaIndex's NodeWithScore
    wraps the node that carries the ids)."""
    for holder in (obj, getattr(obj, "node", None)):
        if holder is None:
            continue
        if isinstance(holder, dict):
            if holder.get(name) is not None:
                return holder[name]
        else:
            value = getattr(holder, name, _MISSING)
            if value is not _MISSING and (value is not None or holder is not obj):
                return value
    return _MISSING


def _metadata(obj: Any) -> dict:
    for name in ("metadata", "meta", "payload"):  # Haystack calls it meta, Qdrant payload
        value = _field(obj, name)
        if isinstance(value, dict):
            return value
    return {}


def result_id(obj: Any, id_from: str, position: int) -> str:
    if id_from.startswith("metadata."):
        key = id_from[len("metadata."):]
        meta = _metadata(obj)
        value = meta.get(key)
        if value is None or value == "":
            keys = ", ".join(sorted(map(str, meta))) or "none"
            raise ResultError(f"result {position} has no metadata {key!r} (its metadata keys: {keys})")
    else:
        value = _field(obj, id_from)
        if value is _MISSING or value is None or value == "":
            hint = "; its metadata has " + ", ".join(sorted(map(str, _metadata(obj)))) if _metadata(obj) else ""
            raise ResultError(
                f"result {position} has no {id_from!r}{hint}: set retriever.id_from "
                f'("id", "node_id", "ref_doc_id" or "metadata.<key>")'
            )
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ResultError(f"result {position} has an id of type {type(value).__name__} at {id_from!r}")
    return str(value)


def ranked(items: Iterable[tuple[Any, Any]], id_from: str, score: str) -> list[tuple[str, Any]]:
    """``(object, raw score or None)`` pairs, best first as the framework ordered them, to
    ``(id, score)`` pairs. When no result carries a score (a LangChain retriever drops them),
    scores come from the rank (``rank_scores``) so the framework's own order is kept."""
    items = list(items)
    if items and all(raw is None for _, raw in items):
        # the report recognises these stand-ins and suggests no cutoff from them
        return [(result_id(obj, id_from, n), score)
                for n, ((obj, _), score) in enumerate(zip(items, rank_scores(len(items))), 1)]
    out = []
    for n, (obj, raw) in enumerate(items, 1):
        if raw is None:
            raise ResultError(f"result {n} has no score while others have one")
        if score == "distance":
            raw = _negated(raw)
        out.append((result_id(obj, id_from, n), raw))
    return out


def _split(item: Any) -> tuple[Any, Any]:
    """One result of a ``python`` callable that uses ``id_from``: an ``(object, score)`` pair
    (LangChain's ``*_with_score`` searches) or an object with a ``score``."""
    if isinstance(item, tuple) and len(item) == 2:
        return item
    raw = _field(item, "score")
    return item, None if raw is _MISSING else raw


def _negated(value: Any) -> Any:
    # Only numbers: anything else stays as it is and clean() names its type.
    return -value if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _negated_pair(item: Any) -> Any:
    if isinstance(item, dict) and "score" in item:
        return {**item, "score": _negated(item["score"])}
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return (item[0], _negated(item[1]))
    return item


def _converted(raw, id_from: str | None, score: str):
    if id_from is None:  # plain (id, score) pairs whose scores are distances
        yield from (_negated_pair(item) for item in raw)
    else:
        yield from ranked([_split(item) for item in raw], id_from, score)


def adapt_callable(fn: Callable, id_from: str | None, score: str, batch: bool) -> Callable:
    """The ``python`` type with ``id_from`` or ``score = "distance"``: the callable's results
    are turned into ``(id, score)`` pairs before the usual cleaning."""
    if id_from is None and score == "similarity":
        return fn

    def one(raw):
        if raw is None or isinstance(raw, (str, bytes, dict)) or not hasattr(raw, "__iter__"):
            return raw  # clean() names what is wrong with it
        # A generator: a missing id raises while ci-eval cleans this question's answer, so in
        # a batch it fails that question only.
        return _converted(raw, id_from, score)

    if batch:
        return lambda questions, depth, **params: [one(r) for r in fn(questions, depth, **params)]
    return lambda question, depth, **params: one(fn(question, depth, **params))
