"""Markdown building blocks of the comment: tables, id lists, "+N more" lines, folded
sections. Every user-controlled string passes through ``core/escape.py`` here."""

from __future__ import annotations

from tabulate import tabulate

from ci_eval.core.escape import code_span, escape_md
from ci_eval.core.textfmt import plural


def ids(values, limit: int | None = None) -> str:
    """Question ids as code spans, cut to ``limit`` with a "(+N more)" tail."""
    values = list(values)
    shown = values if limit is None else values[:limit]
    if not shown and values:
        return f"{plural(len(values), 'question')} (listed in the job summary)"
    text = ", ".join(code_span(i, 60, in_table=False) for i in shown)
    if len(values) > len(shown):
        text += f" (+{len(values) - len(shown)} more)"
    return text


def metric(name: str) -> str:
    """A metric name as the artefact spells it (a fork's artefact can spell anything)."""
    return escape_md(name, 40)


def short_sha(sha: str | None) -> str:
    return code_span((sha or "")[:7] or "?", 12, in_table=False)


def table(headers: list[str], rows: list[list[str]]) -> str:
    # tabulate pads by display width when the optional wcwidth package happens to be
    # installed and by code points otherwise; the comment must not depend on which (the
    # same inputs give the same bytes everywhere), so pin it to code points.
    import tabulate as _tabulate_module

    wide = _tabulate_module.WIDE_CHARS_MODE
    _tabulate_module.WIDE_CHARS_MODE = False
    try:
        return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
    finally:
        _tabulate_module.WIDE_CHARS_MODE = wide


def question_cell(qid: str, text: str, limit: int = 80) -> str:
    return f"{code_span(qid, 40)} {escape_md(text, limit)}"


def more(n: int, what: str) -> str:
    return f"\n\n… +{n} more {what} (see the job summary or the JSON report)"


def details(title: str, body: str) -> str:
    return f"<details><summary>{title}</summary>\n\n{body}\n\n</details>"
