"""`ci-eval init` on the user's folder: the dependencies it declares, and writing the new
project files without overwriting anything unasked."""

from __future__ import annotations

from pathlib import Path

from ci_eval.errors import InputError


def declared_requirements(root: Path) -> list[tuple[str, str]]:
    """``(file, requirement)`` from pyproject.toml (PEP 621, dependency groups, Poetry) and
    requirements*.txt. A file that cannot be read is skipped: init only guesses from them."""
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


def _pyproject_requirements(path: Path) -> list[str]:
    from ci_eval.inputs.files import read_toml

    try:
        data = read_toml(path, "pyproject.toml")
    except InputError:
        return []
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    found = list(project.get("dependencies") or [])
    for group in (project.get("optional-dependencies") or {}, data.get("dependency-groups") or {}):
        for items in group.values() if isinstance(group, dict) else ():
            found += [i for i in items if isinstance(i, str)] if isinstance(items, list) else []
    poetry = (data.get("tool") or {}).get("poetry") or {}
    found += list((poetry.get("dependencies") or {}).keys()) if isinstance(poetry, dict) else []
    return [r for r in found if isinstance(r, str)]


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
    from ci_eval.core.scaffold import detect_framework, next_steps, project_files

    detected = detect_framework(declared_requirements(root)) if framework == "auto" and root.is_dir() else None
    kind = detected.framework if detected else ("python" if framework in ("auto", "none") else framework)
    files = project_files(kind, templates.text, (root / "requirements.txt").is_file())
    written = write_project(root, files, force)
    return "\n".join([*(f"wrote {root / rel}" for rel in written), next_steps(kind, detected)])
