import math

from ci_eval.core.textfmt import integer_size


def test_an_integer_is_named_by_its_digit_count():
    assert integer_size(10**400) == "an integer of 401 digits"
    assert integer_size(-(10**400)) == "an integer of 401 digits"


def test_an_integer_past_pythons_printing_limit_is_counted_from_its_bits():
    value = 10**5000  # str() refuses more than 4,300 digits by default
    assert integer_size(value) == f"an integer of about {round(value.bit_length() * math.log10(2))} digits"
