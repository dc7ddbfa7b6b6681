"""Files -> core objects. Every error names the file and the place."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs.files import decode, read_bytes, read_json, read_toml

CONFIG_NAMES = ("ci-eval.toml",)
# A base artefact comes from another run, perhaps a fork's: cap it before parsing.
MAX_ARTEFACT_BYTES = 512 * 1024 * 1024


def find_config(start: str | os.PathLike = ".") -> Path:
    """``ci-eval.toml`` in the folder, else ``pyproject.toml`` with a ``[tool.ci-eval]``."""
    folder = Path(start)
    for name in CONFIG_NAMES:
        if (folder / name).is_file():
            return folder / name
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file() and "ci-eval" in read_toml(pyproject, "pyproject.toml").get("tool", {}):
        return pyproject
    raise InputError(
        "no configuration found: create ci-eval.toml (see README.md) or pass --config FILE",
        str(folder / "ci-eval.toml"),
    )


def load_config(path: str | os.PathLike | None = None):
    from ci_eval.core.config import parse_config

    p = Path(path) if path is not None else find_config()
    data = read_toml(p, "config file")
    prefix: tuple = ()
    if p.name == "pyproject.toml":
        tool = data.get("tool", {})
        if "ci-eval" not in tool:
            raise InputError("has no [tool.ci-eval] table", str(p))
        data, prefix = tool["ci-eval"], ("tool", "ci-eval")
    return parse_config(data, str(p), str(p.parent), prefix)


def load_gold_set(path: str):
    """The gold set and the sha256 of its bytes (which pins it in the artefact)."""
    from ci_eval.core.goldset import content_hash, parse_gold_set

    data, raw = read_json(path, "gold set")
    return parse_gold_set(data, str(path)), content_hash(raw)


def load_manifest(config):
    """The current index (a core.manifest.ChunkIndex), from a file or the user's callable."""
    from ci_eval.inputs.manifest import manifest_from_value, read_manifest

    if config.manifest_callable:
        from ci_eval.inputs.pyimport import import_target

        fn = import_target(config.manifest_callable, config.source, "index.callable")
        try:
            data = fn()
        except Exception as exc:
            raise InputError(
                f"index.callable raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}",
                config.source,
                "index.callable",
            ) from None
        return manifest_from_value(data, f"{config.manifest_callable}()", config.index_version)
    if not config.manifest:
        return None
    return read_manifest(config.manifest, config.index_version)


def load_answers(path: str, known: set[str] | None = None) -> dict[str, bool]:
    """``{"id": ..., "correct": true|false}`` per line, from the team's end-to-end eval."""
    raw = read_bytes(path, "answers file")
    text = decode(raw, path)
    answers: dict[str, bool] = {}
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            problems.append(InputError(f"invalid JSON: {exc}", path, f"line {n}"))
            continue
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            problems.append(InputError('expected an object with a string "id"', path, f"line {n}"))
            continue
        if not isinstance(row.get("correct"), bool):
            problems.append(InputError('"correct" must be true or false', path, f"line {n}"))
            continue
        if row["id"] in answers:
            problems.append(InputError(f"question {row['id']!r} appears twice", path, f"line {n}"))
            continue
        if known is not None and row["id"] not in known:
            problems.append(InputError(f"question {row['id']!r} is not in the gold set", path, f"line {n}"))
            continue
        answers[row["id"]] = row["correct"]
    if problems:
        raise InputErrors(problems)
    return answers


def load_artefact(path: str | os.PathLike, max_bytes: int = MAX_ARTEFACT_BYTES) -> dict:
    """A run artefact from disk, validated as untrusted input."""
    from ci_eval.core.artefact import validate_artefact

    data, _ = read_json(path, "run artefact", max_bytes)
    if not isinstance(data, dict):
        raise InputError("a run artefact must be a JSON object", str(path), "(top level)")
    return validate_artefact(data, str(path))


def parse_artefact_bytes(raw: bytes, source: str) -> dict:
    """The same, for an artefact that arrived in a workflow-artifact zip."""
    from ci_eval.core.artefact import validate_artefact
    from ci_eval.inputs.files import parse_json

    if len(raw) > MAX_ARTEFACT_BYTES:
        raise InputError(f"run artefact is over the {MAX_ARTEFACT_BYTES:,}-byte limit", source)
    data = parse_json(decode(raw, source), source)
    if not isinstance(data, dict):
        raise InputError("a run artefact must be a JSON object", source, "(top level)")
    return validate_artefact(data, source)


__all__ = [
    "InputErrors",
    "find_config",
    "load_answers",
    "load_artefact",
    "load_config",
    "load_gold_set",
    "load_manifest",
    "parse_artefact_bytes",
]
