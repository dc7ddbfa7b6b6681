"""A sweep's rows as a dot-and-whisker chart: one panel per metric, one line per row, the
row's mean as a dot and, for rows after the first, the paired 95 % interval of its change
from row 1 drawn around row 1's mean (so the whisker is where the row's mean could be, as
far as the test can tell, and a whisker clear of row 1's line is a real change)."""

from __future__ import annotations

import math

from ci_eval.core.compare.sweep import SweepTable
from ci_eval.core.svg import open_chart, xml

_PANEL_W, _LABEL_W, _ROW_H, _TOP = 260, 220, 22, 50


def _span(sweep: SweepTable, m: str) -> tuple[float, float]:
    ends = []
    base = sweep.rows[0].means[m]
    for r in sweep.rows:
        ends.append(r.means[m])
        t = r.tests.get(m)
        if t is not None and t.p_value is not None:
            ends += [base + t.ci_low, base + t.ci_high]
    ends = [e for e in ends if not math.isnan(e)] or [0.0, 1.0]
    low, high = max(0.0, min(ends)), min(1.0, max(ends))
    pad = max((high - low) * 0.08, 0.01)
    return max(0.0, low - pad), min(1.0, high + pad)


def sweep_svg(sweep: SweepTable, title: str = "ci-eval sweep") -> str:
    n_rows, n_metrics = len(sweep.rows), len(sweep.metrics)
    w = _LABEL_W + n_metrics * (_PANEL_W + 20) + 10
    h = _TOP + n_rows * _ROW_H + 40
    out = open_chart(w, h, title)
    for i, r in enumerate(sweep.rows):
        y = _TOP + i * _ROW_H + _ROW_H / 2
        out.append(f'<text x="8" y="{y + 4:.1f}">{r.number}. {xml(r.label[:32])}</text>')
    for j, m in enumerate(sweep.metrics):
        out += _panel(sweep, m, _LABEL_W + j * (_PANEL_W + 20))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _panel(sweep: SweepTable, m: str, x0: float) -> list[str]:
    low, high = _span(sweep, m)

    def x(v: float) -> float:
        # a whisker's end past the axis (an interval around row 1's mean reaching below 0 or
        # above 1, where no mean can be) is drawn at the axis's end, never past it
        return x0 + (min(max(v, low), high) - low) / (high - low) * _PANEL_W

    bottom = _TOP + len(sweep.rows) * _ROW_H
    base = sweep.rows[0].means[m]
    out = [f'<text x="{x0:.1f}" y="{_TOP - 12}" font-weight="bold">{xml(m)}</text>',
           f'<line x1="{x0:.1f}" y1="{bottom}" x2="{x0 + _PANEL_W:.1f}" y2="{bottom}" stroke="#444"/>',
           f'<text x="{x0:.1f}" y="{bottom + 16}">{low:.2f}</text>',
           f'<text x="{x0 + _PANEL_W:.1f}" y="{bottom + 16}" text-anchor="end">{high:.2f}</text>']
    if not math.isnan(base):
        out.append(f'<line x1="{x(base):.1f}" y1="{_TOP}" x2="{x(base):.1f}" y2="{bottom}" '
                   'stroke="#999" stroke-dasharray="3,3"/>')
    for i, r in enumerate(sweep.rows):
        y = _TOP + i * _ROW_H + _ROW_H / 2
        t = r.tests.get(m)
        colour = "#1f6feb" if t is None else ("#d1242f" if t.significant and t.delta < 0
                                              else "#1a7f37" if t.significant else "#57606a")
        if t is not None and t.p_value is not None:
            out.append(f'<line x1="{x(base + t.ci_low):.1f}" y1="{y:.1f}" x2="{x(base + t.ci_high):.1f}" '
                       f'y2="{y:.1f}" stroke="{colour}" stroke-width="2"/>')
        if not math.isnan(r.means[m]):
            out.append(f'<circle cx="{x(r.means[m]):.1f}" cy="{y:.1f}" r="4" fill="{colour}">'
                       f"<title>{xml(r.label)}: {xml(m)} {r.means[m]:.3f}</title></circle>")
    return out
