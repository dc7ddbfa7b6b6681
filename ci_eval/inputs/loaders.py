"""Files -> core objects. Every error names the file and the place."""

from __future__ import annotations

import os
from pathlib import Path

from ci_eval.core.limits import MAX_ARTEFACT_BYTES  # noqa: F401 (the readers import it from here)
from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs.files import read_json, read_toml

CONFIG_NAME = "ci-eval.toml"
TOOL_TABLE = "ci-eval"


def _pyproject_table(pyproject: Path) -> bool:
    """Whether pyproject.toml has a ``[tool.ci-eval]`` table; a near miss is an error."""
    import difflib

    tool = _tool_table(read_toml(pyproject, "pyproject.toml"), pyproject)
    if TOOL_TABLE in tool:
        return True
    near = difflib.get_close_matches(TOOL_TABLE, [str(t) for t in tool], n=1, cutoff=0.75)
    if near:
        raise InputError(f"[tool.{near[0]}] is not read by ci-eval (did you mean [tool.{TOOL_TABLE}]?)",
                         str(pyproject))
    return False


def _config_in(folder: Path) -> Path | None:
    toml, pyproject = folder / CONFIG_NAME, folder / "pyproject.toml"
    in_pyproject = pyproject.is_file() and _pyproject_table(pyproject)
    if toml.is_file() and in_pyproject:
        raise InputError(f"two configurations in one folder: {toml} and [tool.{TOOL_TABLE}] in {pyproject}; "
                         "keep one", str(folder))
    if toml.is_file():
        return toml
    return pyproject if in_pyproject else None


def find_config(start: str | os.PathLike = ".") -> Path:
    """``ci-eval.toml``, else ``pyproject.toml`` with a ``[tool.ci-eval]`` table, in ``start``
    and then its parents up to the repository root (the folder holding ``.git``), as pytest
    and ruff look for theirs. A config found above ``start`` is returned relative to the
    current folder (``../ci-eval.toml``), so messages name it the way the user would."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        found = _config_in(folder)
        if found is not None:
            return Path(start) / found.name if folder == here else Path(os.path.relpath(found))
        if (folder / ".git").exists():
            break
    raise InputError(
        f"no configuration found in {here} or its parents up to the repository root: create "
        f"{CONFIG_NAME} (see README.md) or pass --config FILE",
        str(Path(start) / CONFIG_NAME),
    )


def discover_config(start: str | os.PathLike = ".") -> Path | None:
    """What ``find_config`` finds, or None when there is no config at all (``compare`` and
    the poster go on without one and say so); any other problem is still an error."""
    try:
        return find_config(start)
    except InputError as exc:
        if exc.message.startswith("no configuration found"):
            return None
        raise


def _tool_table(data: dict, path: Path) -> dict:
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise InputError("must be a table ([tool.ci-eval] lives in it)", str(path), "tool")
    return tool


def load_config(path: str | os.PathLike | None = None):
    """The config at ``path``, or the one ``find_config`` finds. Relative paths in it, the
    python import path and the command's working folder resolve against its folder."""
    from ci_eval.core.config import parse_config

    p = Path(path) if path is not None else find_config()
    data = read_toml(p, "config file")
    prefix: tuple = ()
    if p.name == "pyproject.toml":
        tool = _tool_table(data, p)
        if TOOL_TABLE not in tool:
            _pyproject_table(p)  # raises with a "did you mean" for [tool.ci_eval]
            raise InputError(f"has no [tool.{TOOL_TABLE}] table", str(p))
        data, prefix = tool[TOOL_TABLE], ("tool", TOOL_TABLE)
    return parse_config(data, str(p), str(p.parent), prefix)


def load_gold_set(path: str):
    """The gold set and the sha256 of its bytes (which pins it in the artefact): read a
    question at a time, or whole when the streamed reading finds a problem to word."""
    from ci_eval.core.gold.goldset import GoldSetBuilder, content_hash, parse_gold_set
    from ci_eval.inputs.files import read_blocks
    from ci_eval.inputs.json_stream import GiveUp, stream_object

    builder = GoldSetBuilder()
    try:
        head, sha = stream_object(read_blocks(path, "gold set"), "questions", builder.add)
    except GiveUp:
        pass
    else:
        gold = builder.finish(head)
        if gold is not None:
            return gold, sha
    del builder
    data, raw = read_json(path, "gold set")
    sha = content_hash(raw)
    del raw  # a large gold set's bytes need not outlive its parse
    return parse_gold_set(data, str(path)), sha


def load_manifest(config):
    """The current index (a core.manifest.ChunkIndex), from a file or the user's callable."""
    from ci_eval.inputs.manifest import manifest_from_value, read_manifest

    if config.manifest_callable:
        from ci_eval.inputs.index_process import call_index

        data = call_index(config)  # in a process of its own: the token is not in its memory
        return manifest_from_value(data, f"{config.manifest_callable}()", config.index_version)
    if not config.manifest:
        return None
    return read_manifest(config.manifest, config.index_version)


def _checked_artefact(data, source: str) -> dict:
    """Shape (the schema), then meaning (names, ranges, counts): every problem at once."""
    from ci_eval.core.artefact.artefact import validate_artefact
    from ci_eval.core.artefact.artefact_checks import artefact_problems

    validate_artefact(data, source)  # a document that is not an artefact at all: one line
    problems = artefact_problems(data, source)
    if problems:
        raise InputErrors(problems)
    return data


__all__ = [
    "InputErrors",
    "find_config",
    "load_config",
    "load_gold_set",
    "load_manifest",
]
