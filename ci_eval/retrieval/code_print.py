"""A fingerprint of the retriever's own code, for the retrieval cache's key.

An answer cached under a config is only as good as the code that gave it: edit the
retriever's file and the same config asks a different retriever. So the key holds, besides
the recorded config and the index version:

- python and the framework types: the target's module as files (a module inside a package:
  every ``.py`` file of its top-level package, since it imports its siblings; a top-level
  module: its own file), found where the import finds it first (the config's folder, then
  the repository root: inputs/pyimport.import_folders); the same for ``warmup``. A module
  found in neither is installed: its distribution's version stands for its files;
- command: every word of the command that names a file (the script), resolved against the
  config's folder;
- the framework types: the installed version of the framework itself.

Read before the run (no import of the user's code: a file is hashed, not run).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

# A package past this many files is hashed by its first ones in path order: the key then
# misses an edit in the rest, which is said in the docs, not a reason to read a whole tree.
MAX_FILES = 2_000
_FRAMEWORK_DISTRIBUTIONS = {"langchain": ("langchain-core",), "llamaindex": ("llama-index-core",),
                            "haystack": ("haystack-ai",)}


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _module_files(module: str, folders: list[str]) -> tuple[str, list[Path]] | None:
    """(the folder it was found in, its files) for ``module`` in the first folder that holds it."""
    parts = module.split(".")
    for folder in folders:
        base = Path(folder)
        as_file = base.joinpath(*parts).with_suffix(".py")
        as_package = base.joinpath(*parts, "__init__.py")
        if not (as_file.is_file() or as_package.is_file()):
            continue
        if len(parts) == 1 and as_file.is_file():
            return folder, [as_file]
        top = base / parts[0]
        files = sorted(p for p in top.rglob("*.py") if "__pycache__" not in p.parts)[:MAX_FILES]
        return folder, files
    return None


def _installed_version(module: str) -> tuple[str, str] | None:
    from importlib import metadata

    top = module.split(".")[0]
    try:
        names = metadata.packages_distributions().get(top) or []
    except Exception:  # noqa: BLE001 - a broken install's metadata: no version, not a crash
        return None
    for name in names:
        try:
            return name, metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def _version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def fingerprint(config) -> dict:
    """``{"files": {name: sha256}, "versions": {distribution: version}}`` of ``config``'s
    retriever; names are relative to the folder they were found in."""
    from ci_eval.inputs.pyimport import import_folders

    r = config.retriever
    files: dict[str, str] = {}
    versions: dict[str, str] = {}
    folders = import_folders(config.base_dir)
    targets = [t for t in (r.target, getattr(r, "warmup", None)) if t] if r.type != "command" else []
    for target in targets:
        module = target.partition(":")[0]
        found = _module_files(module, folders)
        if found is None:
            installed = _installed_version(module)
            if installed:
                versions[installed[0]] = installed[1]
            continue
        folder, paths = found
        for path in paths:
            digest = _digest(path)
            if digest:
                files[os.path.relpath(path, folder)] = digest
    if r.type == "command":
        base = Path(config.base_dir or ".")
        for word in r.command:
            path = Path(word) if os.path.isabs(word) else base / word
            if path.is_file():
                digest = _digest(path)
                if digest:
                    files[word] = digest
    for name in _FRAMEWORK_DISTRIBUTIONS.get(r.type, ()):
        version = _version(name)
        if version:
            versions[name] = version
    return {"files": dict(sorted(files.items())), "versions": dict(sorted(versions.items()))}


def what_changed(before: dict, now: dict) -> list[str]:
    """The files and versions that differ between two fingerprints, by name."""
    out = []
    for kind in ("files", "versions"):
        old, new = before.get(kind) or {}, now.get(kind) or {}
        out += [name for name in sorted(set(old) | set(new)) if old.get(name) != new.get(name)]
    return out
