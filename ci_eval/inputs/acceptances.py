"""The acceptance file `ci-eval accept` writes and the gate reads (core/compare/acceptance.py):
read when it exists, refused with its place when it is not that shape, written whole."""

from __future__ import annotations

import os

from ci_eval.core.compare.acceptance import Accepted, Acceptance, acceptances_toml, parse_acceptances


def read_acceptances(path: str | os.PathLike | None, label: str | None = None) -> Accepted:
    """The committed acceptances at ``path`` (none when the file does not exist, or no path)
    and the PR's label when it carries the accept label."""
    from ci_eval.inputs.files import read_toml

    if path is None or not os.path.isfile(path):
        return Accepted((), str(path or ""), label)
    return Accepted(parse_acceptances(read_toml(path, "acceptance file"), str(path)), str(path), label)


def write_acceptances(path: str | os.PathLike, entries: tuple[Acceptance, ...]) -> None:
    from ci_eval.inputs.files import atomic_write

    atomic_write(path, acceptances_toml(entries))
