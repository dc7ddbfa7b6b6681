"""Plain-text helpers shared by the core and the adapters."""

from __future__ import annotations


def one_line(text: object, limit: int = 300) -> str:
    """``text`` on one line (runs of whitespace become one space), at most ``limit``
    characters: user code's error messages and stderr go into one-line reports."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
