"""Importing the user's ``module:function`` targets, with errors they can act on.

The user's module runs inside ci-eval's process, so whatever it does while imported or
called must end as a message and a non-zero exit, never as ci-eval vanishing with exit 0:
``sys.exit`` raises ``SystemExit`` (caught like any exception), and ``os._exit`` is
replaced, while user code runs, by a function that raises ``ExitCalled`` instead.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

from ci_eval.core.text import one_line
from ci_eval.errors import InputError, RetrieverError


class ExitCalled(BaseException):
    """The user's code called ``os._exit``. A BaseException, like SystemExit, so that the
    user's own ``except Exception`` cannot swallow it."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


class ImportFailed(RetrieverError):
    """The user's module was found but raised or exited while being imported."""

    def __init__(self, message: str, source: str, place: str):
        super().__init__(message)
        self.message, self.source, self.place = message, source, place

    def as_input_error(self) -> InputError:
        return InputError(self.message, self.source, self.place)


@contextmanager
def os_exit_raises():
    """While user code runs, ``os._exit(n)`` raises ``ExitCalled(n)`` in ci-eval's own
    process. A forked child (multiprocessing) keeps the real one: it must still exit."""
    real, pid = os._exit, os.getpid()

    def guarded(code=0):
        if os.getpid() != pid:
            real(code)
        raise ExitCalled(code)

    os._exit = guarded
    try:
        yield
    finally:
        os._exit = real


def describe_failure(exc: BaseException) -> str:
    """What the user's code did, in a few words: raised X, called sys.exit or os._exit."""
    if isinstance(exc, ExitCalled):
        return f"called os._exit({exc.code!r})"
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    text = one_line(exc, 200)
    return f"raised {type(exc).__name__}: {text}" if text else f"raised {type(exc).__name__}"


def repository_root(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` holding ``.git`` (a folder, or a file in a
    worktree or submodule); None outside a repository."""
    here = os.path.abspath(folder)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def import_folders(base_dir: str | None) -> list[str]:
    """Where a target's module is looked for first: the config file's folder, then the
    repository root above it (a config in eval/sweep/ imports the project's package)."""
    folder = os.path.abspath(base_dir or ".")
    root = repository_root(folder)
    return [folder] + ([root] if root and root != folder else [])


def _missing_module(exc: ModuleNotFoundError, module_name: str, folders: list[str]) -> str:
    missing = exc.name or "?"
    if module_name == missing or module_name.startswith(missing + "."):
        # where it was looked for, without paths: the same line on every machine
        where = "the config file's folder and the repository root" if len(folders) > 1 else "the config file's folder"
        return (f"cannot import {module_name!r}: no module named {missing!r} (looked for in {where}, "
                "then the installed packages)")
    return (f"cannot import {module_name!r}: it imports {missing!r}, which is not installed "
            f"(install it in the environment that runs ci-eval)")


def import_target(spec: str, source: str, place: str, base_dir: str | None = None) -> Callable:
    """``import_object`` for a function: the target must be callable."""
    target = import_object(spec, source, place, base_dir)
    if not callable(target):
        raise InputError(f"{spec!r} is not callable", source, place)
    return target


def import_object(spec: str, source: str, place: str, base_dir: str | None = None) -> Any:
    """Import ``module:name`` (a function, or a framework retriever or vector store) with
    ``base_dir`` (the config file's folder) and the repository root above it first on
    sys.path, so the target resolves the same from any working folder. A missing module
    or dependency is bad input (exit 2); a module that raises or exits while imported is
    the retriever failing (``ImportFailed``, exit 4)."""
    module_name, _, attr = spec.partition(":")
    folders = import_folders(base_dir)
    for folder in reversed(folders):  # the config's folder ends up first
        if folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        with os_exit_raises():
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise InputError(_missing_module(exc, module_name, folders), source, place) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the user's module raised or exited while importing
        raise ImportFailed(f"importing {module_name!r} {describe_failure(exc)}", source, place) from None
    try:
        target = getattr(module, attr)
    except AttributeError:
        raise InputError(f"module {module_name!r} has no attribute {attr!r}", source, place) from None
    return target
