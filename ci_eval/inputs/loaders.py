"""Files -> core objects. Every error names the file and the place."""

from __future__ import annotations

import os
from pathlib import Path

from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs.files import decode, json_lines, read_bytes, read_json, read_toml

CONFIG_NAMES = ("ci-eval.toml",)
# The one size limit of a run artefact, for the writer and every reader: 128 MiB holds
# about 130,000 questions at the default depth (an artefact takes about 1 KB a question).
# A base artefact comes from another run, perhaps a fork's: readers cap it before parsing.
MAX_ARTEFACT_BYTES = 128 * 1024 * 1024


def find_config(start: str | os.PathLike = ".") -> Path:
    """``ci-eval.toml`` in the folder, else ``pyproject.toml`` with a ``[tool.ci-eval]``."""
    folder = Path(start)
    for name in CONFIG_NAMES:
        if (folder / name).is_file():
            return folder / name
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file() and "ci-eval" in _tool_table(read_toml(pyproject, "pyproject.toml"), pyproject):
        return pyproject
    raise InputError(
        "no configuration found: create ci-eval.toml (see README.md) or pass --config FILE",
        str(folder / "ci-eval.toml"),
    )


def _tool_table(data: dict, path: Path) -> dict:
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise InputError("must be a table ([tool.ci-eval] lives in it)", str(path), "tool")
    return tool


def load_config(path: str | os.PathLike | None = None):
    from ci_eval.core.config import parse_config

    p = Path(path) if path is not None else find_config()
    data = read_toml(p, "config file")
    prefix: tuple = ()
    if p.name == "pyproject.toml":
        tool = _tool_table(data, p)
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
    for n, row in json_lines(text, path):
        if isinstance(row, InputError):
            problems.append(row)
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


def _checked_artefact(data, source: str) -> dict:
    """Shape (the schema), then meaning (names, ranges, counts): every problem at once."""
    from ci_eval.core.artefact import validate_artefact
    from ci_eval.core.artefact_checks import artefact_problems

    if not isinstance(data, dict):
        raise InputError("a run artefact must be a JSON object", source, "(top level)")
    validate_artefact(data, source)
    problems = artefact_problems(data, source)
    if problems:
        raise InputErrors(problems)
    return data


def artefact_text(artefact: dict, destination: str, limit: int = MAX_ARTEFACT_BYTES) -> str:
    """The artefact as written, refused when a later run could not read it back."""
    from ci_eval.core.artefact import dumps

    text = dumps(artefact)
    # A character is at most 4 bytes: most artefacts are sized without encoding them.
    size = len(text.encode("utf-8")) if len(text) * 4 > limit else len(text)
    if size > limit:
        raise InputError(
            f"the run artefact would be {size:,} bytes, over the {limit:,}-byte limit a later run "
            f"reads as its baseline ({len(artefact.get('questions') or ()):,} questions): every pull "
            "request would skip it; measure fewer questions or a smaller retriever.depth",
            destination,
        )
    return text


def load_artefact(path: str | os.PathLike, max_bytes: int = MAX_ARTEFACT_BYTES) -> dict:
    """A run artefact from disk, validated as untrusted input."""
    data, _ = read_json(path, "run artefact", max_bytes)
    return _checked_artefact(data, str(path))


def parse_artefact_bytes(raw: bytes, source: str) -> dict:
    """The same, for an artefact that arrived in a workflow-artifact zip."""
    from ci_eval.inputs.files import parse_json

    if len(raw) > MAX_ARTEFACT_BYTES:
        raise InputError(f"run artefact is over the {MAX_ARTEFACT_BYTES:,}-byte limit", source)
    return _checked_artefact(parse_json(decode(raw, source), source), source)


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
