"""The command line. Errors become a message and an exit code here, and nowhere else."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

from ci_eval import __version__
from ci_eval.blas_threads import one_thread_here
from ci_eval.core.text import one_line
from ci_eval.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, CiEvalError, InputErrors


class _Parser(argparse.ArgumentParser):
    """argparse exits with its own code 2 already; route it through our one-line format."""

    def error(self, message: str):  # noqa: D401 - argparse's signature
        from ci_eval.errors import UsageError

        raise UsageError(f"{message} (see '{self.prog} --help')")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command, or with just ``only``: running one command should not
    pay for importing the others (numpy, tabulate, jsonschema, PyGithub)."""
    from ci_eval.commands import COMMANDS

    parser = _Parser(
        prog="ci-eval",
        description="Measure a RAG system's retrieval stage on its own, on every pull request.",
        epilog="Example: ci-eval demo --out demo-out",
    )
    parser.add_argument("--version", action="version", version=f"ci-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        if only is not None and name != only:
            continue
        try:
            module = importlib.import_module(f"ci_eval.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"ci_eval.commands.{name}":
                raise
            continue
        module.register(sub)
    return parser


def _say(line: str) -> None:
    print(f"ci-eval: {line}", file=sys.stderr)


# Taken when ci-eval starts, before any user code could replace os._exit.
_EXIT_NOW = os._exit


def main(argv: list[str] | None = None) -> int:
    """Run one command and return its exit code. Called with no arguments (the console entry
    point, ``python -m ci_eval``) it does not return: the process ends with that code."""
    if argv is not None:
        return _run(argv)
    one_thread_here()  # the process is ci-eval's: numpy's BLAS on one thread (blas_threads.py)
    try:
        code = _run(sys.argv[1:])
    except SystemExit as exc:  # argparse's --help; nothing of the user's reaches here unguarded
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_BAD_INPUT)
    end_process(code)


def end_process(code: int) -> NoReturn:
    """End with ``code`` now. The user's retriever module, or any of its dependencies, may
    have registered an atexit handler (``atexit.register(lambda: os._exit(0))``) or started a
    non-daemon thread (an SDK's heartbeat); a normal interpreter exit would run the first,
    replacing the exit code the run decided, and wait for the second, holding a CI job until
    it is cancelled. So the decision is final here: the output is flushed (nothing of ours
    waits on atexit or on a thread's join: every file is written through a context manager
    and every child process is ended by then) and the process ends with ``os._exit``."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a reader that left (`| head`) or a closed stream: nothing more to say
    _EXIT_NOW(code)


def _run(argv: list[str]) -> int:
    # --version must not pay for importing every command (start-up budget).
    if argv in (["--version"], ["-V"]):
        print(f"ci-eval {__version__}")
        return 0
    try:
        from ci_eval.commands import COMMANDS

        parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return EXIT_BAD_INPUT
        return int(args.func(args))
    except InputErrors as exc:
        for line in exc.lines():
            _say(f"error: {line}")
        return exc.exit_code
    except CiEvalError as exc:
        _say(f"error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except BrokenPipeError:
        # `ci-eval evaluate ... | head`: the reader left; not an error of ours.
        return 0
    except Exception as exc:  # the one place an unexpected error is caught
        if os.environ.get("CI_EVAL_DEBUG") == "1":
            raise
        _say(f"internal error: {type(exc).__name__}: {one_line(exc)}")
        _say("this is a bug in ci-eval; rerun with CI_EVAL_DEBUG=1 for the traceback")
        return EXIT_INTERNAL
