"""The house plan holds: commands are the top floor, nothing below reaches up into them, and
no two modules of the package import each other, however indirectly (an import inside a
function counts: it is the same dependency, only later)."""

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


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of ``package`` -> the package's modules it imports, anywhere in it."""
    paths = {module_name(p, package): p for p in package.rglob("*.py")}
    return {name: {n for n in imported_modules(path) if n in paths and n != name} for name, path in paths.items()}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected parts of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while not part or part[-1] != node:
                part.append(stack.pop())
            if len(part) > 1:
                circles.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(circles)


def test_no_import_circle_in_the_package():
    assert import_circles(import_graph()) == []


def test_the_check_sees_a_circle_through_a_late_import(tmp_path):
    package = tmp_path / "ci_eval"
    (package / "core").mkdir(parents=True)
    (package / "core" / "a.py").write_text("from ci_eval.core.b import x\n")
    (package / "core" / "b.py").write_text("def x():\n    from ci_eval.core import c\n")
    (package / "core" / "c.py").write_text("import ci_eval.core.a\n")
    (package / "core" / "d.py").write_text("from ci_eval.core.a import y\n")
    assert import_circles(import_graph(package)) == [["ci_eval.core.a", "ci_eval.core.b", "ci_eval.core.c"]]
