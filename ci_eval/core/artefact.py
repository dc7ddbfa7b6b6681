"""The run artefact: everything needed to answer "did last Tuesday's change help" later.

Built here as a plain dict (the format is in docs/design.md and
schemas/artefact.schema.json); serialised with sorted keys and ``repr`` floats so the same
inputs give the same bytes apart from ``created_at``.
"""

from __future__ import annotations

import json
from typing import Any

from ci_eval.core.validate import problems_or_none
from ci_eval.errors import InputError, InputErrors

SCHEMA_VERSION = 1
# Older versions we can still read go here with an upgrade function; none exist yet.
READABLE_VERSIONS = {1}
HISTORY_LENGTH = 30


def build_artefact(
    *,
    tool_version: str,
    created_at: str,
    git: dict | None,
    config: dict,
    gold_set: dict,
    index: dict,
    k: int,
    metrics: tuple[str, ...] | list[str],
    abstain_below: float | None,
    evaluation,
    history: list | None = None,
) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ci-eval", "version": tool_version},
        "created_at": created_at,
        "git": git,
        "config": config,
        "gold_set": gold_set,
        "index": index,
        "k": k,
        "metrics": list(metrics),
        "abstain_below": abstain_below,
        "questions": evaluation.questions,
        "summary": evaluation.summary,
        "history": list(history or []),
    }


def history_entry(artefact: dict) -> dict:
    """The compact line a later run carries forward to draw a trend without downloads."""
    git = artefact.get("git") or {}
    return {
        "sha": git.get("sha"),
        "created_at": artefact.get("created_at"),
        "index_version": (artefact.get("index") or {}).get("version"),
        "means": dict(artefact.get("summary", {}).get("overall", {}).get("means", {})),
    }


def carry_history(base: dict | None) -> list:
    """The base branch's recent headline metrics: the base's own history plus the base."""
    if not base:
        return []
    return (list(base.get("history") or []) + [history_entry(base)])[-HISTORY_LENGTH:]


def _compact(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(artefact: dict) -> str:
    """One top-level key per line and one question per line: readable, diffable, and fast,
    because each piece goes through json's C encoder (``indent`` would force the pure-Python
    one, several times slower and far hungrier on a 100,000-question run)."""
    parts = ["{"]
    keys = sorted(artefact)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = artefact[key]
        if key == "questions" and value:
            rows = ",\n  ".join(_compact(q) for q in value)
            parts.append(f' {_compact(key)}: [\n  {rows}\n ]{comma}')
        else:
            parts.append(f" {_compact(key)}: {_compact(value)}{comma}")
    parts.append("}")
    return "\n".join(parts) + "\n"


def validate_artefact(data: Any, source: str) -> dict:
    """An artefact may come from a fork's run or an old release: check it before use."""
    from ci_eval.schemas import load

    if not isinstance(data, dict):
        raise InputError("a run artefact must be a JSON object", source)
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version not in READABLE_VERSIONS:
        newer = version > SCHEMA_VERSION
        raise InputError(
            f"artefact schema_version {version} is {'newer' if newer else 'older'} than this ci-eval "
            f"reads ({', '.join(map(str, sorted(READABLE_VERSIONS)))}); "
            + ("upgrade ci-eval" if newer else "re-run the base branch to refresh it"),
            source,
            "schema_version",
        )
    problems = problems_or_none(data, load("artefact"), source)
    if problems:
        raise InputErrors(problems[:20])
    return data
