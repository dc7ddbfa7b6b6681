"""Hostile strings through the one escaping function (and the code-span one)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.report.escape import ELLIPSIS, ZWJ, code_span, escape_md, marker_suffix


def _unescaped(text: str, ch: str) -> list[int]:
    """Positions of ``ch`` not preceded by a backslash."""
    return [m.start() for m in re.finditer(re.escape(ch), text)
            if m.start() == 0 or text[m.start() - 1] != "\\"]


def test_html_is_entity_escaped():
    out = escape_md('<script>alert("x")</script> & <img src=x onerror=y>')
    assert "<" not in out and ">" not in out
    assert out.startswith("&lt;script&gt;")
    assert "&amp;" in out


def test_an_existing_entity_is_escaped_again():
    assert escape_md("&lt;b&gt;") == "&amp;lt;b&amp;gt;"


def test_pipes_cannot_split_a_table_cell():
    out = escape_md("a | b || c")
    assert _unescaped(out, "|") == []
    assert out.count("\\|") == "a | b || c".count("|")


@pytest.mark.parametrize("text", ["line one\nline two", "cr\rlf\r\n", "sep\u2028x", "nul\x00x"])
def test_one_line_whatever_the_line_breaks(text):
    out = escape_md(text)
    assert "\n" not in out and "\r" not in out and "\u2028" not in out and "\x00" not in out


@pytest.mark.parametrize("text", ["@org/team", "ping @octocat please", "mail me@example.com"])
def test_mentions_are_broken_with_a_zero_width_joiner(text):
    out = escape_md(text)
    assert "@" + ZWJ in out
    assert not re.search(r"@[A-Za-z0-9]", out)


def test_metric_names_keep_their_at_sign():
    assert escape_md("hit@5 and recall@15") == "hit@5 and recall@15"


@pytest.mark.parametrize("text", ["::set-output name=x::y", "::add-mask::secret", "a::b"])
def test_workflow_commands_cannot_form(text):
    out = escape_md(text)
    assert "::" not in out
    assert not out.startswith("::")


@pytest.mark.parametrize("text", ["[x](javascript:alert(1))", "![img](https://evil.example/p.png)",
                                  "[ref]: https://evil.example"])
def test_links_and_images_cannot_form(text):
    out = escape_md(text)
    assert _unescaped(out, "[") == [] and _unescaped(out, "]") == []
    assert "https://" not in out


@pytest.mark.parametrize("text", ["see https://evil.example/x", "www.evil.example",
                                  "<https://evil.example>"])
def test_auto_links_are_broken(text):
    out = escape_md(text)
    assert not re.search(r"[A-Za-z]://", out)  # the scheme is split from its slashes
    assert "www." not in out.lower() and "<" not in out


def test_link_text_is_kept_visible():
    assert escape_md("[x](javascript:alert(1))") == "\\[x\\](javascript:alert(1))"


def test_emphasis_and_code_markers_are_inert():
    out = escape_md("*bold* _it_ `code` ~~strike~~ back\\slash")
    for ch in "*_`~":
        assert _unescaped(out, ch) == []
    assert "back\\\\slash" in out


def test_length_is_capped_with_an_ellipsis():
    out = escape_md("x" * 500, limit=40)
    assert out == "x" * 39 + ELLIPSIS
    assert escape_md("short", limit=40) == "short"


def test_cap_counts_the_text_before_escaping():
    # escaping may lengthen the text, but never cuts inside an entity
    out = escape_md("<" * 10, limit=5)
    assert out == "&lt;" * 4 + ELLIPSIS


def test_code_span_fence_outgrows_backticks_inside():
    out = code_span("a `b` ``c``")
    assert out.startswith("```") and out.endswith("```")
    assert code_span("`edge`") == "`` `edge` ``"


def test_code_span_in_a_table_escapes_pipes_and_lines():
    out = code_span("a|b\nc")
    assert out == "`a\\|b c`"
    assert code_span("a|b", in_table=False) == "`a|b`"


def test_marker_suffix_cannot_close_the_comment():
    s = marker_suffix("gold --> <script> x")
    assert "--" not in s and ">" not in s and "<" not in s
    assert s == "gold-script-x"


# Characters each branch of code_span turns on: backticks, spaces at the edges, pipes, line
# and other control characters, Unicode spaces that str.strip removes, and plain letters.
_SPAN_ALPHABET = "ab1#/.-`| \t\n\r\x00\x7f\u0085\u2028\u00a0\u3000é𝄞"


@given(st.text(alphabet=_SPAN_ALPHABET, max_size=14), st.sampled_from([None, 0, 1, 5, 12, 120]), st.booleans())
@settings(max_examples=3000, deadline=None)
def test_a_plain_span_is_written_as_the_general_path_writes_it(text, limit, in_table):
    from ci_eval.core.report.escape import _any_code_span

    assert code_span(text, limit, in_table) == _any_code_span(text, limit, in_table)


@pytest.mark.parametrize("text", ["q-0001", "kb/a#s1", "how-to", "c12 x", "é𝄞"])
def test_an_id_s_span_is_its_text_between_backticks(text):
    assert code_span(text) == f"`{text}`" == code_span(text, None, False)


@pytest.mark.parametrize("text", ["fixes #12", "see owner/repo#5", "GH-7 again", "(#3)", "gh-12"])
def test_issue_references_cannot_form(text):
    out = escape_md(text)
    assert not re.search(r"(?i)(#|\bgh-)\d", out)
    assert out.replace(ZWJ, "") == text  # the text is kept, only defused


def test_a_hash_not_before_digits_is_kept():
    assert escape_md("C# and #tag and doc#x") == "C# and #tag and doc#x"


@pytest.mark.parametrize("ch", ["\u202e", "\u202a", "\u2066", "\u2067", "\u2068", "\u2069",
                                "\u200e", "\u200f", "\u061c"])
def test_bidirectional_controls_cannot_reorder_a_cell(ch):
    text = f"safe {ch}txe.exe{ch} end"
    for out in (escape_md(text), code_span(text), code_span(f"id{ch}x")):
        assert ch not in out
    assert escape_md(text) == "safe  txe.exe  end"
