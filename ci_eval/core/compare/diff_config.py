"""The config diff: which settings differ between base and head, the ones that change
results first (retriever, index, k), as dotted paths: ``retriever.params.b 0.75 -> 0.9``."""

from __future__ import annotations

import json
from dataclasses import dataclass

# Paths under these heads change what is retrieved or measured: they lead the list.
_FIRST = ("retriever", "index", "k", "metrics", "relevance_level", "abstain_below")


@dataclass(frozen=True)
class ConfigChange:
    path: str
    base: str
    head: str


class _Unset:
    def __repr__(self) -> str:
        return "(unset)"


UNSET = _Unset()


def _flatten(value, prefix: str = "") -> dict[str, object]:
    """Leaves by dotted path. An empty table has no leaves: ``gate = {}`` and no ``gate``
    mean the same, so neither shows up as a change."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key in sorted(value, key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            out.update(_flatten(value[key], path))
        return out
    return {prefix: value}


def format_value(value: object) -> str:
    """A config value as users wrote it: strings bare, the rest as compact JSON."""
    if value is UNSET:
        return "(unset)"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _order(path: str) -> tuple:
    head = path.split(".", 1)[0]
    rank = _FIRST.index(head) if head in _FIRST else len(_FIRST)
    return (rank, path)


def config_diff(base: dict | None, head: dict | None) -> tuple[ConfigChange, ...]:
    b, h = _flatten(base or {}), _flatten(head or {})
    changes = []
    for path in sorted(b.keys() | h.keys(), key=_order):
        bv, hv = b.get(path, UNSET), h.get(path, UNSET)
        if bv is UNSET or hv is UNSET or bv != hv or type(bv) is not type(hv):
            changes.append(ConfigChange(path, format_value(bv), format_value(hv)))
    return tuple(changes)
