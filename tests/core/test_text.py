from ci_eval.core.text import one_line


def test_one_line_collapses_whitespace_and_caps_the_length():
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line(ValueError("x\ny")) == "x y"
    long = one_line("w " * 200, limit=11)
    assert len(long) == 11 and long.endswith("…") and long.startswith("w w w w w")
