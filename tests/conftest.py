"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from suite_paths import SHARED


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
