"""Personal data and secrets out of mined questions (core/gold/personal.py)."""

from __future__ import annotations

import pytest

from ci_eval.core.gold.personal import luhn, scrub


def test_the_luhn_check_on_a_known_valid_and_a_one_digit_off_number():
    # 4111 1111 1111 1111: doubled every second digit from the right, 8 + 7 * (1 + 2) ... sums to 30
    assert luhn("4111111111111111") and not luhn("4111111111111112")


@pytest.mark.parametrize("text, kind", [
    ("reset for ana.lopez@example.com", "email"),
    ("call +1 415 555 0132 today", "phone"),
    ("call (555) 010-4477 today", "phone"),
    ("card 4111-1111-1111-1111 declined", "card"),
    ("key sk-proj-abcdEFGH1234ijklMNOP5678 fails", "key"),
    ("token github_pat_11ABCDEFG0123456789abcdefghij leaked", "key"),
    ("AKIAIOSFODNN7EXAMPLE in the config", "key"),
    ("bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA in a header", "key"),
])
def test_each_kind_is_replaced_by_its_placeholder(text, kind):
    out = scrub(text)
    assert out.found == {kind: 1} and f"[{kind}]" in out.text


@pytest.mark.parametrize("text", [
    "how does the boundary-layer separate at mach 2 in 1958",
    "what changed in python 3.11.2",
    "order 123456789 status",  # nine digits without a phone number's grouping
    "card 4111 1111 1111 1112 declined",  # fails the Luhn check
    "internationalization-and-localization-frameworks",  # long, but words
])
def test_ordinary_questions_are_kept_as_they_are(text):
    assert scrub(text).text == text and not scrub(text).found
