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


def bound(x: float, excludes_zero: bool) -> str:
    """An interval's end: three decimals, unless they would read ``0.000`` for an end that
    keeps the interval off zero (then two significant digits, so the sign shows)."""
    if excludes_zero and x != 0.0 and abs(x) < 5e-4:
        return f"{x:+.1e}"
    return f"{x:+.3f}"


def ci_text(t) -> str:
    """A paired test's 95% interval, ``[-0.040, +0.000]``."""
    off = t.ci_low > 0.0 or t.ci_high < 0.0
    return f"[{bound(t.ci_low, off and t.ci_low > 0)}, {bound(t.ci_high, off and t.ci_high < 0)}]"


def small(x: float | None) -> str:
    """A positive size (a minimum detectable change): ``f3``, but never ``0.000``."""
    return "<0.001" if x is not None and 0.0 < x < 5e-4 else f3(x)


def test_text(t) -> str:
    """A paired test's statistic: its own p-value and 95% interval (one procedure, both
    uncorrected, so zero is outside the interval exactly when p < 0.05), then, in a family,
    the Holm-corrected p-value the mark is decided by, named as such."""
    if t is None or t.p_value is None:
        return ""
    holm = (f"; Holm over {t.family}: {p_text(t.p_adjusted)}"
            if t.family > 1 and t.p_adjusted is not None else "")
    tied = f", {t.ties} flapping across repeated passes counted as unchanged" if t.ties else ""
    return f"{p_text(t.p_value)}, 95% CI {ci_text(t)}{holm}{tied}"


def integer_size(value: int) -> str:
    """An integer too long to quote in an error line, by its length (past 4,300 digits
    Python will not print one, so the count is then worked out from its bits)."""
    try:
        digits = len(str(abs(value)))
    except ValueError:
        return f"an integer of about {round(abs(value).bit_length() * math.log10(2))} digits"
    return f"an integer of {digits} digits"
