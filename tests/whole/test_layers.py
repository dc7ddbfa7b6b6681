"""The house plan holds: commands are the top floor, nothing below reaches up into them."""

import ast
from pathlib import Path

from suite_paths import PACKAGE


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def reaches_commands(path: Path) -> list[str]:
    return sorted(n for n in imported_modules(path) if n == "ci_eval.commands" or n.startswith("ci_eval.commands."))


def test_only_the_shell_imports_commands():
    offenders = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "commands" or rel.as_posix() == "cli.py":
            continue
        found = reaches_commands(path)
        if found:
            offenders[rel.as_posix()] = found
    assert offenders == {}


def test_the_check_sees_an_upward_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from ci_eval.commands.compare import run\nfrom ci_eval import commands\nimport ci_eval.core.gate\n")
    assert reaches_commands(sample) == ["ci_eval.commands", "ci_eval.commands.compare", "ci_eval.commands.compare.run"]
