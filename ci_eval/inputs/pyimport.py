"""Importing the user's ``module:function`` targets, with errors they can act on."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from ci_eval.errors import InputError


def import_target(spec: str, source: str, place: str) -> Callable:
    target = import_object(spec, source, place)
    if not callable(target):
        raise InputError(f"{spec!r} is not callable", source, place)
    return target


def import_object(spec: str, source: str, place: str) -> Any:
    """``module:name``, callable or not (a framework retriever or vector store instance)."""
    module_name, _, attr = spec.partition(":")
    # Users point at modules in their repository; make the working folder importable the
    # way `python -m` would.
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise InputError(f"cannot import {module_name!r}: no module named {exc.name!r}", source, place) from None
    except Exception as exc:  # the user's module raised while importing
        raise InputError(
            f"importing {module_name!r} raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}",
            source,
            place,
        ) from None
    try:
        target = getattr(module, attr)
    except AttributeError:
        raise InputError(f"module {module_name!r} has no attribute {attr!r}", source, place) from None
    return target
