"""The score conversion's fixed-point fast path against the path that takes any plain
decimal: the same doubles for every step it takes, and it takes the common shapes."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.errors import InputError
from ci_eval.trec import parse as trec

DIGITS = "0123456789"
ODD = [".", "-", "+", "-.", "1e5", "1.2.3", "12345678901234567", "99999999999999999", "5.",
       ".5", "-7", "1-2", "0x1", "+0.0", "-0", "00000000000000.5", "1234567890123456"]


def _columns(tokens: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A run text holding the tokens as scores, and each token's start and end in it."""
    text, starts, ends = b"", [], []
    for i, token in enumerate(tokens):
        head = f"q Q0 d{i} 1 ".encode()
        starts.append(len(text) + len(head))
        ends.append(starts[-1] + len(token))
        text += head + token.encode() + b" x\n"
    return np.frombuffer(text, dtype=np.uint8), np.array(starts), np.array(ends)


def _hex(values) -> list[str]:
    return [float(x).hex() for x in values]


def _strtod(token: str) -> float:
    try:
        return float(token)
    except ValueError:
        return math.nan


@st.composite
def shaped_scores(draw) -> tuple[list[str], bool]:
    """Score tokens sharing one shape (a fixed count of integer digits, a fixed count of
    decimals, or whole numbers), and whether the fast path must take them all; sometimes
    with mixed signs or one token of another shape or not a number at all."""
    shape = draw(st.sampled_from(["integer digits", "decimals", "whole"]))
    fixed = draw(st.integers(0, 9))
    sign = draw(st.sampled_from(["", "-", "+", "mixed"]))
    tokens = []
    for _ in range(draw(st.integers(1, 40))):
        s = draw(st.sampled_from(["", "-", "+"])) if sign == "mixed" else sign
        free = draw(st.text(DIGITS, min_size=1, max_size=15))
        part = draw(st.text(DIGITS, min_size=fixed, max_size=fixed))
        tokens.append(s + {"integer digits": part + "." + free, "decimals": free + "." + part,
                           "whole": free}[shape])
    odd = draw(st.booleans())
    if odd:
        tokens[draw(st.integers(0, len(tokens) - 1))] = draw(
            st.sampled_from(ODD) | st.text(DIGITS + ".-+e", min_size=1, max_size=18))
    digits = [sum(c in DIGITS for c in t) for t in tokens]
    taken = (not odd and sign != "mixed" and all(len(t) <= 16 for t in tokens)
             and (shape != "whole" or max(digits) <= 15))
    return tokens, taken


@settings(max_examples=400, deadline=None)
@given(shaped_scores())
def test_the_fast_path_gives_what_the_general_path_gives(case):
    tokens, taken = case
    buf, starts, ends = _columns(tokens)
    fast = trec._fixed_point(buf, starts, ends)
    general = trec._any_point(buf, starts, ends)
    assert (fast is not None) >= taken  # it takes every block of one shape
    if fast is not None:
        assert _hex(fast) == _hex(general)
        assert _hex(fast) == _hex(_strtod(t) for t in tokens)
    assert _hex(trec._plain_decimals(buf, starts, ends)) == _hex(general)


@settings(max_examples=100, deadline=None)
@given(shaped_scores())
def test_a_run_reads_the_same_without_the_fast_path(case):
    tokens, _ = case
    text = "".join(f"q{i % 3} Q0 d{i} 1 {t} x\n" for i, t in enumerate(tokens)).encode()

    def outcome():
        try:
            return _hex(trec.parse_run(text, "r").scores)
        except InputError as err:
            return str(err)

    with_fast = outcome()
    with mock.patch.object(trec, "_fixed_point", lambda *args: None):
        assert outcome() == with_fast


@pytest.mark.parametrize("tokens", [
    [f"{x:.6f}" for x in np.linspace(-40, 40, 999)],  # a fixed count of decimals
    [repr(k / 1024) for k in range(1, 1024)],  # short reprs of scores in (0, 1)
    [repr(-k / 1024) for k in range(1, 1024)],  # and in (-1, 0)
    [str(k) for k in range(-500, 500)],  # whole numbers
    [f"{k}." for k in range(1000)],  # a point and no decimals
])
def test_common_shapes_take_the_fast_path(tokens):
    buf, starts, ends = _columns(tokens)
    fast = trec._fixed_point(buf, starts, ends)
    assert fast is not None
    assert _hex(fast) == _hex(float(t) for t in tokens)


def test_points_in_other_columns_are_left_to_the_general_path():
    # Mixed columns, a token past 16 bytes, a mantissa past 2**53, an exponent.
    for tokens in (["1.5", "12.25", "0.125"], ["0.5", "0.1234567890123456"],
                   ["9007199254740993", "1"], ["1.5", "2e3"], ["1.5", "."]):
        buf, starts, ends = _columns(tokens)
        assert trec._fixed_point(buf, starts, ends) is None
        assert _hex(trec._parse_scores(buf, starts, ends)) == _hex(float(t) if t != "." else
                                                                    math.nan for t in tokens)
