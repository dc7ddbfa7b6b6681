"""The files `ci-eval init` writes, shipped inside the package, loaded by name."""

from __future__ import annotations

from importlib import resources


def text(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text("utf-8")
