"""Functions stay short enough to read in one screen. One over the limit must say why it
has to be long, in a comment on the line right after its signature (``# long: ...``)."""

import ast
from pathlib import Path

from suite_paths import PACKAGE

LIMIT = 60


def long_functions(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    lines = path.read_text().splitlines()
    found = []
    for node in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.end_lineno - node.lineno + 1 <= LIMIT:
            continue
        body_start = node.body[0].lineno - 1  # 0-based index of the first body line
        header = lines[node.lineno - 1:body_start + 1]
        if not any(line.strip().startswith("# long:") for line in header):
            found.append(f"{path.relative_to(root).as_posix()}:{node.lineno} {node.name}")
    return found


def test_no_function_is_long_without_a_reason():
    offenders = [f for path in sorted(PACKAGE.rglob("*.py")) for f in long_functions(path)]
    assert offenders == []


def test_the_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "bare.py").write_text(f"def f():\n{body}\n")
    (tmp_path / "explained.py").write_text(f"def f():\n    # long: one table, row by row\n{body}\n")
    (tmp_path / "short.py").write_text("def f():\n    return 1\n")
    assert long_functions(tmp_path / "bare.py", tmp_path) == ["bare.py:1 f"]
    assert long_functions(tmp_path / "explained.py", tmp_path) == []
    assert long_functions(tmp_path / "short.py", tmp_path) == []
