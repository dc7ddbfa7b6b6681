"""The rows of a sweep: a list of config files, or one config and a grid of values.

``--grid chunk_size=256,512,1024 fusion=none,rrf`` is the cartesian product of its axes,
the first axis varying slowest, so the first row is every axis's first value (the row the
others are compared with). A key names a ``[retriever]`` key when it is one
(``depth``, ``timeout``, ``path``, ...; ``retriever.NAME`` says so explicitly), a top-level
key the scoring reads (``k``, ``relevance_level``, ``abstain_below``), an ``[index]`` key
(``index.manifest``, ``index.version``, ``index.callable``), or a param the config already
sets: one of ``[index] params`` (the index callable's arguments, which reach the retriever
too, so one key cuts the index and searches it) or of ``[retriever] params``.
``index.params.NAME`` and ``params.NAME`` add a new one explicitly; any other key is
refused with the list of what can vary. Each row's table is checked by the same
``parse_config`` as a config file, so a bad value is named at its place.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass

from ci_eval.core.config import Config, parse_config
from ci_eval.errors import InputError

# [retriever] keys a grid may set by their bare name (the retriever's own keys come first)
_RETRIEVER_KEYS = ("depth", "timeout", "total_timeout", "concurrency", "batch", "score", "id_from",
                   "path", "target", "format")
_TOP_KEYS = ("k", "relevance_level", "abstain_below")
_INDEX_KEYS = ("manifest", "callable", "version")
MAX_ROWS = 200  # a grid past this is a typo (an axis of a thousand values), not a plan


@dataclass(frozen=True)
class Axis:
    key: str  # as the user wrote it
    place: tuple[str, ...]  # where it goes in the config table
    values: tuple


@dataclass(frozen=True)
class PlannedRow:
    number: int  # 1-based, the order of the table
    label: str
    config: Config


def _value(text: str):
    """A grid value as TOML would read it bare: a whole number, a number, true/false, or
    else the text itself."""
    low = text.strip()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(low)
        except ValueError:
            pass
    return low


def _varies(config: Config) -> str:
    """What a config can vary, for the message that refuses a key it cannot."""
    index = ", ".join(config.index_params) or "none"
    own = ", ".join((config.raw.get("retriever") or {}).get("params") or {}) or "none"
    return (f"a grid varies {', '.join(_TOP_KEYS)}; the [retriever] keys "
            f"{', '.join(_RETRIEVER_KEYS)} (or retriever.NAME); index.{', index.'.join(_INDEX_KEYS)}; "
            f"this config's [index] params ({index}) and [retriever] params ({own}); "
            "index.params.NAME or params.NAME adds a new one")


def _place(key: str, config: Config) -> tuple[str, ...] | None:
    """Where ``key`` goes in ``config``'s table, or None when it is nothing a config can
    vary (a bare name is a retriever key, a scoring key, or a param the config already sets:
    a typo would otherwise reach the retriever as a param it ignores, and every row would be
    the same row)."""
    own = (config.raw.get("retriever") or {}).get("params") or {}
    if key.startswith("index.params."):
        return ("index", "params", key[len("index.params."):]) if len(key) > len("index.params.") else None
    if key.startswith("params."):
        return ("retriever", "params", key[len("params."):]) if len(key) > len("params.") else None
    if key.startswith("index."):
        name = key[len("index."):]
        if name in _INDEX_KEYS:
            return ("index", name)
        return ("index", "params", name) if name in config.index_params else None
    if key.startswith("retriever."):
        name = key[len("retriever."):]
        return ("retriever", name) if name in _RETRIEVER_KEYS else None
    if key in _RETRIEVER_KEYS:
        return ("retriever", key)
    if key in _TOP_KEYS:
        return (key,)
    if key in config.index_params:
        return ("index", "params", key)
    if key in own:
        return ("retriever", "params", key)
    return None


def parse_grid(items: list[str], config: Config) -> tuple[Axis, ...]:
    """``["chunk_size=256,512", "fusion=none,rrf"]`` -> the axes of a grid over ``config``,
    every problem at once."""
    axes, seen, problems = [], set(), []
    for item in items:
        key, eq, values = item.partition("=")
        key = key.strip()
        parts = [v for v in (p.strip() for p in values.split(","))]
        if not eq or not key or not values.strip() or "" in parts:
            problems.append(InputError(f"{item!r}: expected KEY=VALUE[,VALUE...], e.g. "
                                       "chunk_size=256,512", "--grid"))
            continue
        place = _place(key, config)
        if place is None:
            problems.append(InputError(f"{key!r} is not something {config.source} can vary{_near(key, config)}: "
                                       f"{_varies(config)}", "--grid"))
            continue
        if place in seen:
            problems.append(InputError(f"{key!r} is given twice", "--grid"))
            continue
        seen.add(place)
        axes.append(Axis(key, place, tuple(dict.fromkeys(_value(p) for p in parts))))
    if problems:
        from ci_eval.errors import InputErrors

        raise InputErrors(problems)
    size = 1
    for axis in axes:
        size *= len(axis.values)
    if size > MAX_ROWS:
        raise InputError(f"the grid has {size:,} rows; at most {MAX_ROWS} are run", "--grid")
    return tuple(axes)


def _near(key: str, config: Config) -> str:
    from ci_eval.core.config import did_you_mean

    own = (config.raw.get("retriever") or {}).get("params") or {}
    return did_you_mean(key, [*_TOP_KEYS, *_RETRIEVER_KEYS, *config.index_params, *own])


def _label_value(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def grid_rows(config: Config, axes: tuple[Axis, ...]) -> tuple[PlannedRow, ...]:
    """One row per point of the grid, each a Config built from ``config``'s table with the
    point's values set (checked as a config file is; the problems name the row)."""
    rows = []
    for number, point in enumerate(itertools.product(*(a.values for a in axes)), 1):
        data = copy.deepcopy(config.raw)
        for axis, value in zip(axes, point):
            table = data
            for part in axis.place[:-1]:
                table = table.setdefault(part, {})
                if not isinstance(table, dict):
                    raise InputError(f"{'.'.join(axis.place[:-1])} is not a table", config.source)
            table[axis.place[-1]] = value
        label = " ".join(f"{a.key}={_label_value(v)}" for a, v in zip(axes, point))
        built = parse_config(data, f"{config.source} (--grid {label})", config.base_dir, config.prefix)
        rows.append(PlannedRow(number, label, built))
    return tuple(rows)


def file_labels(paths: list[str]) -> list[str]:
    """A row label per config file: its name without ``.toml`` when that names it alone,
    else the path as given (``a/ci-eval.toml`` and ``b/ci-eval.toml``)."""
    stems = [p.rsplit("/", 1)[-1].removesuffix(".toml") for p in paths]
    return stems if len(set(stems)) == len(stems) else list(paths)
