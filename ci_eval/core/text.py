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


def mend_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, the replacement character. Text
    that is not the user's own file (a model's answer, a line of a log a logging library cut
    in the middle of an emoji) is kept, not refused: it can then be written as UTF-8."""
    return LONE_SURROGATE.sub("\ufffd", text) if LONE_SURROGATE.search(text) else text


MASK = "***"


def scrub(text: str, *secrets: str | None) -> str:
    """``text`` with every occurrence of each secret replaced by ``***``. A server's answer
    can echo the credential it was sent (a 401 body: "Invalid API key provided: Bearer
    sk-..."), and a message made from it reaches a terminal, a CI log or a web page. Scrub
    the whole text before cutting it short: a cut through the secret would keep its start."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    return text
