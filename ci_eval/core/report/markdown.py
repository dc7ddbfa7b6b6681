"""Markdown building blocks of the comment: tables, id lists, "+N more" lines, folded
sections. Every user-controlled string passes through ``core/report/escape.py`` here."""

from __future__ import annotations

from ci_eval.core.report.escape import code_span, escape_md
from ci_eval.core.textfmt import plural

# Where a cut list's rest is, in the comment. The job summary, when GitHub's limit for it
# cuts it too, names the full report in the workflow artifact instead (render_summary).
FULL_REPORT = "the job summary"


def ids(values, limit: int | None = None, where: str = FULL_REPORT) -> str:
    """Question ids as code spans, cut to ``limit`` with a "(+N more)" tail; cut to none,
    their count and ``where`` the whole list is."""
    values = list(values)
    shown = values if limit is None else values[:limit]
    if not shown and values:
        return _none_shown(len(values), where)
    return ", ".join(map(_id_span, shown)) + _ids_rest(len(values) - len(shown))


def _id_span(value) -> str:
    return code_span(value, 60, in_table=False)


def _none_shown(count: int, where: str) -> str:
    return f"{plural(count, 'question')} (listed in {where})"


def _ids_rest(rest: int) -> str:
    return f" (+{rest} more)" if rest else ""


class IdsLengths:
    """``len(ids(values, n, where))`` for any n, without writing the list: each id's code
    span is made once, as first needed, and kept for the list written at the length picked
    (``text``). The values are read when first asked for."""

    def __init__(self, values, where: str):
        self._source, self._where = values, where
        self._values: list | None = None
        self._spans: list[str] = []
        self._sums = [0]  # the first i spans' characters with their ", " separators

    def _upto(self, n: int) -> int:
        if self._values is None:
            self._values = list(self._source)
        values, spans, sums = self._values, self._spans, self._sums
        n = min(n, len(values))
        while len(spans) < n:
            span = _id_span(values[len(spans)])
            sums.append(sums[-1] + len(span) + (2 if spans else 0))
            spans.append(span)
        return n

    def length(self, n: int) -> int:
        n = self._upto(n)
        if n == 0:
            return len(self.text(0))
        return self._sums[n] + len(_ids_rest(len(self._values) - n))

    @property
    def started(self) -> bool:
        """Whether any id's span was made (counted or written)."""
        return bool(self._spans)

    def text(self, n: int) -> str:
        n = self._upto(n)
        if n == 0:
            return _none_shown(len(self._values), self._where) if self._values else ""
        return ", ".join(self._spans[:n]) + _ids_rest(len(self._values) - n)


def metric(name: str) -> str:
    """A metric name as the artefact spells it (a fork's artefact can spell anything)."""
    return escape_md(name, 40)


def short_sha(sha: str | None) -> str:
    return code_span((sha or "")[:7] or "?", 12, in_table=False)


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A GitHub markdown table, byte for byte what tabulate's "github" format writes for
    plain text cells (tests/test_markdown_table.py holds the two together), written here in
    one pass because the comment's tables run to tens of thousands of rows and tabulate's
    type inference costs more than the table. Cells tabulate treats specially (more than
    one line, terminal escape codes) still go through tabulate."""
    if not headers or any(len(r) != len(headers) for r in rows) or not all(
            isinstance(c, str) and _plain(c) for r in rows for c in r):
        return _tabulated(headers, rows)
    cells = [[c.strip() for c in row] for row in rows]
    # a column is as wide as its widest cell, and at least its header plus two
    widths = [len(h) + 2 for h in headers]
    for row in cells:
        for j, c in enumerate(row):
            if len(c) > widths[j]:
                widths[j] = len(c)
    lines = [_line(headers, widths), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [_line(row, widths) for row in cells]
    return "\n".join(lines)


def table_at_least(headers: list[str], rows: int) -> int:
    """The fewest characters a table of ``rows`` rows can have: each row's line is at least
    its columns' minimum widths (header plus two) plus the separators."""
    return rows * (sum(len(h) + 5 for h in headers) + 1)


class TableLengths:
    """``len(table(headers, rows[:n]))`` for any n, without writing the table: each row's
    cells are counted once, as they are first needed (``rows``: an iterator of rows), and
    kept for the table written at the length picked (``first``). A table's lines are all as
    long as its widest cells make them, so the length is the line count times one line.
    None when a row is one tabulate lays out (not plain)."""

    def __init__(self, headers: list[str], rows):
        self._rows, self._columns = rows, len(headers)
        self._widths = [len(h) + 2 for h in headers]
        self._sums: list[int] = []  # the columns' widths summed, after each row
        self._kept: list = []  # the rows read so far
        self._plain = True

    def _read(self, row) -> None:
        self._kept.append(row)
        if len(row) != self._columns or not all(isinstance(c, str) and _plain(c) for c in row):
            self._plain = False
        widths = self._widths
        widths[:] = map(max, widths, map(len, map(str.strip, row)))
        self._sums.append(sum(widths))

    def _at_least(self, n: int) -> int:
        # columns only widen with more rows: n + 2 lines at today's widths is a lower bound
        return (n + 2) * (sum(self._widths) + 3 * self._columns + 2) - 1

    def _over(self, n: int, over: int | None) -> bool:
        """Rows are read until there are ``n``; True when they stopped before that because
        a table of ``n`` rows is known to be longer than ``over`` from the rows read so far."""
        while len(self._kept) < n:
            if over is not None and self._plain and self._at_least(n) > over:
                return True
            row = next(self._rows, None)
            if row is None:
                return False
            self._read(row)
        return False

    def length(self, n: int, over: int | None = None) -> int | None:
        """The table of the first n rows (all there are, if fewer), 0 for no row. With
        ``over`` (and n no more than the rows there are): when that length is more than
        ``over``, any number more than ``over`` may be returned instead (fewer rows read)."""
        if self._plain and self._over(n, over):
            return self._at_least(n)
        n = min(n, len(self._sums))
        if not self._plain or not n:
            return None if not self._plain else 0
        return (n + 2) * (self._sums[n - 1] + 3 * self._columns + 2) - 1  # lines and newlines

    def first(self, n: int) -> list:
        """The first n rows (all there are, if fewer), read once for counting and writing."""
        self._over(n, None)
        return self._kept[:n]

    @property
    def started(self) -> bool:
        """Whether any row was read (counted or written)."""
        return bool(self._kept)


def _line(cells, widths) -> str:
    return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"


def _plain(cell: str) -> bool:
    """No line break and no escape code: a cell tabulate lays out as plain text."""
    return "\n" not in cell and "\r" not in cell and "\x1b" not in cell


def _tabulated(headers: list[str], rows: list[list[str]]) -> str:
    # tabulate pads by display width when the optional wcwidth package happens to be
    # installed and by code points otherwise; the comment must not depend on which (the
    # same inputs give the same bytes everywhere), so pin it to code points.
    import tabulate as _tabulate_module

    wide = _tabulate_module.WIDE_CHARS_MODE
    _tabulate_module.WIDE_CHARS_MODE = False
    try:
        return _tabulate_module.tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
    finally:
        _tabulate_module.WIDE_CHARS_MODE = wide


def question_cell(qid: str, text: str, limit: int = 80) -> str:
    return f"{code_span(qid, 40)} {escape_md(text, limit)}"


def more(n: int, what: str, where: str = FULL_REPORT) -> str:
    return f"\n\n… +{n} more {what} (see {where} or the JSON report)"


def details(title: str, body: str) -> str:
    return f"<details><summary>{title}</summary>\n\n{body}\n\n</details>"
