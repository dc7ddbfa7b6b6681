"""Plain-text helpers shared by the core and the adapters."""

from __future__ import annotations

import re

# A lone UTF-16 surrogate ("\ud800" from JSON) is not a character: it cannot be written
# as UTF-8, so text holding one is refused wherever it enters.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def one_line(text: object, limit: int | None = 300) -> str:
    """``text`` on one line (runs of whitespace become one space), at most ``limit``
    characters (None: never cut): user code's error messages and stderr go into one-line
    reports, a question into one line of a topics file."""
    line = " ".join(str(text).split())
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"
