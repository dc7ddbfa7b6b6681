"""Numbers and counts in words, one definition each for the gate's messages and the report."""

from __future__ import annotations

import math


def f3(x: float | None) -> str:
    """A metric value: three decimals, "—" when there is none."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def signed(x: float | None) -> str:
    """A change: ``+0.125``; below half a unit of the last digit it reads ``0.000``."""
    if x is None:
        return "—"
    return "0.000" if abs(x) < 5e-4 else f"{x:+.3f}"


def p_text(p: float) -> str:
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """ "1 question", "3 questions"."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def test_text(t) -> str:
    """A paired test's statistic: the McNemar p-value, else the bootstrap interval."""
    if t is None:
        return ""
    if t.p_value is not None:
        return p_text(t.p_value)
    return f"95% CI [{t.ci_low:+.3f}, {t.ci_high:+.3f}]"


def integer_size(value: int) -> str:
    """An integer too long to quote in an error line, by its length (past 4,300 digits
    Python will not print one, so the count is then worked out from its bits)."""
    try:
        digits = len(str(abs(value)))
    except ValueError:
        return f"an integer of about {round(abs(value).bit_length() * math.log10(2))} digits"
    return f"an integer of {digits} digits"
