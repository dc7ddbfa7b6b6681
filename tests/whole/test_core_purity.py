"""The core does no I/O: a test that reads every core module's imports."""

import ast
from pathlib import Path

import pytest
from suite_paths import PACKAGE

CORE = PACKAGE / "core"
FORBIDDEN = {"os", "io", "pathlib", "subprocess", "socket", "http", "urllib", "shutil", "tempfile",
             "github", "requests", "threading", "zipfile", "sys"}
# The only project modules core code may reach: itself, the error types, and the package's
# JSON Schemas (read-only package data).
ALLOWED_PROJECT = ("ci_eval.core", "ci_eval.errors", "ci_eval.schemas")


def imports_of(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


@pytest.mark.parametrize("module", sorted(CORE.rglob("*.py")), ids=lambda p: p.relative_to(CORE).as_posix())
def test_core_module_does_no_io(module):
    names = list(imports_of(module))
    bad = [n for n in names if n.split(".")[0] in FORBIDDEN]
    assert not bad, f"{module.name} imports {bad}"
    outside = [n for n in names if n.startswith("ci_eval") and not n.startswith(ALLOWED_PROJECT)]
    assert not outside, f"{module.name} reaches outside the core: {outside}"


def test_the_check_can_fail(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nfrom ci_eval.retrieval.query import Query\n")
    names = list(imports_of(sample))
    assert [n for n in names if n.split(".")[0] in FORBIDDEN] == ["os"]
    assert [n for n in names if n.startswith("ci_eval") and not n.startswith(ALLOWED_PROJECT)] == ["ci_eval.retrieval.query"]
