"""`ci-eval init` on the user's folder: the dependencies it declares, and writing the new
project files without overwriting anything unasked."""

from __future__ import annotations

from pathlib import Path

from ci_eval.errors import InputError


def declared_requirements(root: Path) -> list[tuple[str, str]]:
    """``(file, requirement)`` from pyproject.toml (PEP 621, dependency groups, Poetry) and
    requirements*.txt. A requirements file that cannot be read is skipped (init only guesses
    from them); a pyproject.toml that is not valid TOML or has a key of the wrong shape is an
    error naming it."""
    out: list[tuple[str, str]] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        out += [("pyproject.toml", r) for r in _pyproject_requirements(pyproject)]
    for path in sorted(root.glob("requirements*.txt")):
        try:
            lines = path.read_text("utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        out += [(path.name, line) for line in lines if line.strip() and not line.lstrip().startswith(("#", "-"))]
    return out


def _table(value, source: str, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError("must be a table", source, where)
    return value


def _strings(value, source: str, where: str, what: str = "a list of requirement strings") -> list[str]:
    # dependency-groups may also hold {include-group = "..."} tables: those name no package
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, (str, dict)) for v in value):
        raise InputError(f"must be {what}", source, where)
    return [v for v in value if isinstance(v, str)]


def _pyproject_requirements(path: Path) -> list[str]:
    """The requirements pyproject.toml declares. A shape no packaging tool would accept
    (``tool = "x"``, ``dependencies = 5``) is an error at its key, as for any file we read."""
    from ci_eval.inputs.files import read_toml

    data = read_toml(path, "pyproject.toml")
    src = str(path)
    project = _table(data.get("project"), src, "project")
    found = _strings(project.get("dependencies"), src, "project.dependencies")
    for name, groups in (("project.optional-dependencies", project.get("optional-dependencies")),
                         ("dependency-groups", data.get("dependency-groups"))):
        for group, items in _table(groups, src, name).items():
            found += _strings(items, src, f"{name}.{group}")
    poetry = _table(_table(data.get("tool"), src, "tool").get("poetry"), src, "tool.poetry")
    found += list(_table(poetry.get("dependencies"), src, "tool.poetry.dependencies"))
    return found


def write_project(root: Path, files: dict[str, str], force: bool) -> list[str]:
    """Write every file, or none: an existing one is an error naming it unless ``force``."""
    from ci_eval.inputs.files import atomic_write

    if not root.is_dir():
        raise InputError("not a folder", str(root))
    for rel in files:
        path = root / rel
        if path.is_dir() or (path.exists() and not force) or (path.is_symlink() and not force):
            what = "is a folder" if path.is_dir() else "already exists (--force overwrites it)"
            raise InputError(f"{what}; nothing was written", str(path))
    for rel, text in files.items():
        atomic_write(root / rel, text)
    return list(files)


def init_project(root: Path, framework: str = "auto", force: bool = False) -> str:
    """Detect, compose and write; the text to print (what was written, the next steps)."""
    from ci_eval import templates
    from ci_eval.core.scaffold import detect_answers, detect_framework, next_steps, project_files

    requirements = declared_requirements(root) if root.is_dir() else []
    detected = detect_framework(requirements) if framework == "auto" else None
    kind = detected.framework if detected else ("python" if framework in ("auto", "none") else framework)
    answers = detect_answers(requirements, promptfoo_config(root)) if root.is_dir() else None
    files = project_files(kind, templates.text, (root / "requirements.txt").is_file(), answers)
    written = write_project(root, files, force)
    return "\n".join([*(f"wrote {root / rel}" for rel in written), next_steps(kind, detected, answers)])


def promptfoo_config(root: Path) -> str | None:
    """A promptfoo config in the project's folder or one folder down (``evals/``), as a
    path relative to it; None when there is none."""
    from ci_eval.core.scaffold import PROMPTFOO_CONFIGS

    for folder in (root, *sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "node_modules")))):
        for name in PROMPTFOO_CONFIGS:
            if (folder / name).is_file():
                return str((folder / name).relative_to(root))
    return None
