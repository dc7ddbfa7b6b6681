"""Escaping for every user-controlled string that ends up in a rendered report.

Question text, ids, tags and config values come from the user's repository, and a PR
author controls them. A report is posted as a PR comment, written to the job summary and
printed on a workflow's stdout, so one string must be unable to:

- inject HTML (``<script>``, ``<img onerror>``, ``<!-- -->`` that hides the rest),
- break a table (``|``) or the line structure (newlines),
- ping people or teams (``@org/team``),
- issue a workflow command (``::set-output``, ``::add-mask::``) on stdout,
- become a link, an image or an auto-link (``[x](javascript:...)``, ``https://...``),
- reference an issue or pull request here or in another repository (``#12``,
  ``owner/repo#5``, ``GH-7``): GitHub links it and posts a cross-reference there,
- reorder what a reader sees with bidirectional controls (U+202E, U+2066...), so a cell
  cannot show text other than what it holds,
- flood the comment (length cap with an ellipsis).

``escape_md`` is for text cells and prose; ``code_span`` for values shown as code.
"""

from __future__ import annotations

import re

ZWJ = "\u200d"  # zero-width joiner: invisible, breaks @mentions and auto-links
ELLIPSIS = "…"
DEFAULT_LIMIT = 120

# Bidirectional controls (embeddings, overrides, isolates, marks) are flattened with the
# other controls: none of them is needed to show a question and each can disguise one.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f\u0085\u2028\u2029{_BIDI}]+")
# Backslash-escapable punctuation that could start markdown syntax in a text cell.
_MD_ACTIVE = re.compile(r"([\\`*_\[\]~|])")
# "@" starts a mention (or an e-mail auto-link) unless it sits inside a word before digits,
# as in the metric name "hit@5".
_AT = re.compile(r"(?<!\w)@|@(?!\d+\b)")
_SCHEME = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{1,31}):(?=//)")
_WWW = re.compile(r"(?i)\bwww\.")
# "#12", "owner/repo#12" and "GH-12" are issue references: a joiner after "#" or "-" keeps
# the digits from being read as one (a code span is never scanned for them).
_ISSUE_REF = re.compile(r"(?i)(#|\bgh-)(?=\d)")
# A code span's usual text (an id, a path): no control character, backtick or "|", and no
# space or backtick at either end. code_span writes it between two backticks as it is.
_SPAN_INNER = f"[^\x00-\x1f\x7f\u0085\u2028\u2029{_BIDI}`|]"
_SPAN_EDGE = f"[^\x00-\x1f\x7f\u0085\u2028\u2029{_BIDI}`| ]"
_PLAIN_SPAN = re.compile(f"{_SPAN_EDGE}(?:{_SPAN_INNER}*{_SPAN_EDGE})?")


def _flatten(text: object, limit: int | None) -> str:
    """One line, no control characters, at most ``limit`` characters."""
    s = _CONTROL.sub(" ", str(text))
    if limit is not None and len(s) > limit:
        s = s[: max(limit - 1, 0)].rstrip() + ELLIPSIS
    return s


def _defuse(s: str) -> str:
    """Break the patterns that GitHub acts on even inside plain text."""
    s = _AT.sub("@" + ZWJ, s)  # @user, @org/team, e-mail auto-links
    s = s.replace("::", ":" + ZWJ + ":")  # workflow commands
    s = _SCHEME.sub(lambda m: m.group(1) + ZWJ + ":", s)  # https://, javascript://
    s = _WWW.sub(lambda m: m.group(0)[:3] + ZWJ + ".", s)  # www. auto-links
    s = _ISSUE_REF.sub(lambda m: m.group(1) + ZWJ, s)  # #12, owner/repo#12, GH-12
    return s


def escape_md(text: object, limit: int | None = DEFAULT_LIMIT) -> str:
    """Make ``text`` inert in GitHub-flavoured markdown: one line, plain text, capped.

    HTML is entity-escaped (``& < >``), markdown punctuation is backslash-escaped (so
    ``|`` cannot split a table cell and ``[x](...)`` cannot become a link), ``@`` (except
    in ``hit@5``) and ``::`` get a zero-width joiner, URL schemes, ``www.`` and issue
    references (``#12``, ``owner/repo#12``, ``GH-12``) are broken so GitHub does not link them,
    and bidirectional controls become spaces like the other control characters. ``limit`` counts characters of the original text; ``None`` keeps all.
    """
    s = _flatten(text, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_ACTIVE.sub(r"\\\1", s)
    return _defuse(s)


def code_span(text: object, limit: int | None = DEFAULT_LIMIT, in_table: bool = True) -> str:
    """``text`` as one inline code span.

    The fence is one backtick longer than the longest backtick run inside; a space pads
    content that starts or ends with a backtick or a space. In a table cell (``in_table``)
    ``|`` is written ``\\|``, which GitHub's table parser unescapes even inside code.
    Nothing inside a code span is a link, a mention or HTML, and a span never starts a line
    with ``::``.
    """
    if type(text) is str and (limit is None or len(text) <= limit) and _PLAIN_SPAN.fullmatch(text):
        return f"`{text}`"  # what _any_code_span makes of it: nothing to flatten, fence or pad
    return _any_code_span(text, limit, in_table)


def _any_code_span(text: object, limit: int | None, in_table: bool) -> str:
    s = _flatten(text, limit)
    if not s.strip():
        s = s or " "
    runs = [len(r) for r in re.findall(r"`+", s)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if (s.startswith(("`", " ")) or s.endswith("`")) else ""
    if in_table:
        s = s.replace("|", "\\|")
    return f"{fence}{pad}{s}{pad}{fence}"


def fenced_line(text: object, language: str = "sh") -> str:
    """``text`` flattened to one line in a fenced code block whose fence is longer than any
    backtick run inside: nothing in it is a link, a mention, HTML or markdown, and it cannot
    close the block early (a shell command to copy, holding ids a PR author chose)."""
    line = _flatten(text, None)
    runs = [len(r) for r in re.findall(r"`+", line)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{language}\n{line}\n{fence}"


def marker_suffix(text: object) -> str:
    """A marker suffix reduced to ``[A-Za-z0-9._]`` and single dashes: it cannot close the
    HTML comment that holds it (no ``--``, no ``>``)."""
    s = re.sub(r"[^A-Za-z0-9._]+", "-", str(text)).strip("-")
    return s[:64]
