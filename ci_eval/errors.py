"""The error hierarchy, translated into a message and an exit code once, in ``cli.main``.

Exit codes: 0 ok, 1 gate failed, 2 bad input or usage, 3 internal error,
4 the retriever failed, 5 GitHub refused or failed.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_RETRIEVER_FAILED = 4
EXIT_GITHUB_FAILED = 5


class CiEvalError(Exception):
    """Base of every error the tool raises on purpose."""

    exit_code = EXIT_INTERNAL


class InputError(CiEvalError):
    """A mistake in something the user gave us: a file, a flag, an environment variable.

    ``source`` names the file (or flag), ``place`` the line, question id or JSON path.
    The rendered message is always one line.
    """

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, source: str | None = None, place: str | None = None):
        self.message = " ".join(str(message).split())
        self.source = source
        self.place = place
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ":".join(p for p in (self.source, self.place) if p)
        return f"{where}: {self.message}" if where else self.message


class InputErrors(InputError):
    """Several problems in one input, reported together (every problem at once)."""

    def __init__(self, problems: list[InputError]):
        self.problems = list(problems)
        first = self.problems[0]
        more = len(self.problems) - 1
        suffix = f" (and {more} more problem{'s' if more != 1 else ''})" if more else ""
        super().__init__(first.message + suffix, first.source, first.place)

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems]


class NotARunArtefact(InputError):
    """A file given as a run artefact that does not say it is one (a gold set, a stray JSON
    file): one line, never the schema's list of what it lacks. ``ci-eval history`` skips
    such a file in its folder with a warning; every other reader refuses it (exit 2)."""

    def __init__(self, source: str | None = None):
        super().__init__("not a run artefact (it has no \"tool\": {\"name\": \"ci-eval\"}; "
                         "`ci-eval run --out` writes one)", source)


class UsageError(InputError):
    """Wrong command-line usage."""


class RetrieverError(CiEvalError):
    """The user's retriever crashed, hung or produced output we cannot use."""

    exit_code = EXIT_RETRIEVER_FAILED


class GitHubError(CiEvalError):
    """GitHub refused a request (permissions) or kept failing after retries."""

    exit_code = EXIT_GITHUB_FAILED


class GateFailed(CiEvalError):
    """Raised only by the CLI layer after everything was written and posted."""

    exit_code = EXIT_GATE_FAILED
