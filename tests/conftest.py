"""Fixtures shared by the whole suite."""

from __future__ import annotations

import compileall
from pathlib import Path

import pytest
from suite_paths import PACKAGE, SHARED


def pytest_configure(config):
    # The suite starts ci-eval about a thousand times. Where PYTHONDONTWRITEBYTECODE is set
    # (container images often set it), no process keeps what it compiles, so
    # each would compile ci-eval's modules from source again: `run` on a small project took
    # 257 ms of CPU against 166 ms, about 40 s of the suite's wall time on two cores. They
    # are compiled once, before the workers start, as pip compiles a package it installs.
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers
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
