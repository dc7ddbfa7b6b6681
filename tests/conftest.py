"""Fixtures shared by the whole suite."""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

import pytest
from suite_paths import PACKAGE, SHARED


def pytest_configure(config):
    # The suite starts Python about two thousand times (ci-eval, retrievers, helpers). Where
    # PYTHONDONTWRITEBYTECODE is set (container images often set it) no process keeps what it
    # compiles, so each compiled every module it imported from source again: `run` on a small
    # project took 257 ms of CPU against 166 ms. The suite's processes write bytecode as
    # Python does by default, each module compiled once, when it is first imported (the
    # install compiles nothing ahead: most installed modules are never imported here), and
    # ci_eval is compiled before the workers start. A test that must leave a folder
    # untouched sets the variable for its own processes (tests/whole/test_bad_inputs.py).
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        sys.dont_write_bytecode = False
        compileall.compile_dir(PACKAGE, quiet=1)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("reference data ../shared is absent beside the checkout")
    return SHARED


def pytest_addoption(parser):
    parser.addoption(
        "--regen-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/*.md from the current renderer (review the diff)",
    )


@pytest.fixture
def regen_golden(request) -> bool:
    return bool(request.config.getoption("--regen-golden"))
