"""The house plan holds: commands are the top floor, nothing below reaches up into them, and
no two modules of the package import each other, however indirectly (an import inside a
function counts: it is the same dependency, only later)."""

import ast
from pathlib import Path

from suite_paths import PACKAGE


def imported_modules(path: Path) -> set[str]:
    """What a module imports, with a statement or by name: a string that is exactly a dotted
    name under ``ci_eval`` (``importlib.import_module("ci_eval.retrieval.worker")``, a
    registry's table) counts, since the module is imported from it all the same."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("ci_eval."):
            names.add(node.value)
        elif isinstance(node, ast.Import):
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
    sample.write_text("from ci_eval.commands.compare import run\nfrom ci_eval import commands\nimport ci_eval.core.compare.gate\n")
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


def test_the_check_sees_a_circle_through_a_module_imported_by_name(tmp_path):
    package = tmp_path / "ci_eval"
    package.mkdir()
    (package / "registry.py").write_text('RUNNERS = {"python": "ci_eval.runner"}\n')
    (package / "runner.py").write_text("from ci_eval.registry import RUNNERS\n")
    (package / "other.py").write_text('NAME = "ci_eval.runner is a module"\n')
    assert import_circles(import_graph(package)) == [["ci_eval.registry", "ci_eval.runner"]]


# ----------------------------------------------------------------- the core's wings
# ci_eval/core/ is in wings stacked report -> compare -> artefact -> gold -> measure: a module
# imports only its own wing and the floors below it. The modules at core's root (config,
# validate, text, ...) are the floor between gold and measure: every wing above measure uses
# them, config resolves metric names through measure's registry, and measure needs nothing else.
FLOORS = ("measure", "", "gold", "artefact", "compare", "report")
CORE = PACKAGE / "core"


def floor_of(module: str) -> int | None:
    """A core module's floor (its wing's place in FLOORS, "" for core's root); None outside."""
    parts = module.split(".")
    if parts[:2] != ["ci_eval", "core"] or len(parts) < 3:
        return None
    return FLOORS.index(parts[2] if parts[2] in FLOORS else "")


def upward_imports(path: Path, module: str) -> list[str]:
    """What ``path``, the core module ``module``, imports from a floor above its own."""
    own = floor_of(module)
    return sorted(n for n in imported_modules(path) if (floor := floor_of(n)) is not None and floor > own)


def test_every_folder_of_the_core_is_a_wing():
    folders = {p.name for p in CORE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(FLOORS) - {""}
    assert all((CORE / wing / "__init__.py").is_file() for wing in folders)


def test_no_import_runs_back_up_a_wing():
    offenders = {}
    for path in sorted(CORE.rglob("*.py")):
        found = upward_imports(path, module_name(path))
        if found:
            offenders[path.relative_to(PACKAGE).as_posix()] = found
    assert offenders == {}


def test_the_check_sees_an_import_running_back_up_a_wing(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from ci_eval.core.report.render import render\n"
                      "def late():\n    import ci_eval.core.compare.gate\n"
                      "from ci_eval.core import config\nfrom ci_eval.core.measure.metrics import resolve_metric\n"
                      "from ci_eval.core.artefact.artefact import Artefact\nfrom ci_eval.errors import InputError\n")
    assert upward_imports(sample, "ci_eval.core.artefact.artefact") == [
        "ci_eval.core.compare.gate", "ci_eval.core.report.render", "ci_eval.core.report.render.render"]
    # core's root is above measure: config (as every floor) is out of measure's reach
    assert "ci_eval.core.config" in upward_imports(sample, "ci_eval.core.measure.metrics")
    assert upward_imports(sample, "ci_eval.core.report.render") == []
