"""The history's pictures: a heat map of questions x runs and each tag's trend lines.

Both are hand-written SVG (core/svg.py), every user string escaped. The heat map shows the
worst questions one row each and summarises the rest as one stacked band per run, so it
reads the same at 50 questions and at 100,000: what is wrong is at the top, and how much of
the rest sits in each band is one glance at the bottom.
"""

from __future__ import annotations

import numpy as np

from ci_eval.core.compare.history import ABSENT, ALL, MISSED, NO_GOLD, History, QuestionLine, TagPoint
from ci_eval.core.svg import open_chart, xml

ROWS_SHOWN = 40
_CELL_W, _CELL_H = 16, 14
_LABEL_W = 190
_FLAG_W = 200


def bands(k: int) -> list[tuple[str, str]]:
    """(name, colour) of each first-gold-rank band, best first; the two last have no rank."""
    return [
        ("rank 1", "#1a7f37"),
        (f"rank 2-{k}" if k > 2 else "rank 2", "#6fdd8b"),
        (f"rank {k + 1}-{3 * k} (a reranker could lift it)", "#f2cc60"),
        (f"rank > {3 * k}", "#f08c00"),
        ("missed (no gold chunk retrieved)", "#cf222e"),
        ("not in the run / unanswerable", "#eaeef2"),
    ]


def band_of(rank: int, k: int) -> int:
    if rank in (ABSENT, NO_GOLD):
        return 5
    if rank == MISSED:
        return 4
    if rank == 1:
        return 0
    if rank <= k:
        return 1
    return 2 if rank <= 3 * k else 3


def _flag(line: QuestionLine, history: History) -> str:
    runs = history.runs
    if line.failing_since is not None:
        since = runs[line.failing_since].short
        what = f"broken at run {line.failing_since + 1} ({since})" if line.broken_by is not None \
            else f"never in the top {history.k}"
        return what + (", flapping" if line.flapping else "")
    if line.flapping:
        return f"flapping: missed {line.misses} of {line.hits + line.misses}"
    return ""


def heat_map(history: History, lines: list[QuestionLine], shown: int = ROWS_SHOWN) -> str:
    """Questions (worst first, ``lines`` in that order) x runs, each cell its band."""
    k, runs = history.k, history.runs
    top, rest = lines[:shown], lines[shown:]
    palette = bands(k)
    grid_x, grid_y = _LABEL_W, 96
    width = grid_x + max(len(runs), 1) * _CELL_W + _FLAG_W
    summary_h = 100 if rest else 0
    height = grid_y + len(top) * _CELL_H + summary_h + 70
    title = (f"First gold rank per question and run, worst first ({len(lines):,} questions, "
             f"{len(runs)} runs)")
    out = open_chart(width, height, title)
    for i, (name, colour) in enumerate(palette):  # the legend, two rows of three
        x, y = 8 + (i % 3) * 250, 36 + (i // 3) * 18
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{colour}" stroke="#8c959f"/>')
        out.append(f'<text x="{x + 16}" y="{y + 10}">{xml(name)}</text>')
    for r in range(len(runs)):
        if r == 0 or (r + 1) % 5 == 0 or r == len(runs) - 1:
            out.append(f'<text x="{grid_x + r * _CELL_W + _CELL_W / 2}" y="{grid_y - 4}" '
                       f'text-anchor="middle" font-size="10">{r + 1}</text>')
    for row, line in enumerate(top):
        y = grid_y + row * _CELL_H
        out.append(f'<text x="{grid_x - 6}" y="{y + 11}" text-anchor="end" font-size="11">'
                   f'{xml(line.id[:30])}</text>')
        for r, rank in enumerate(line.ranks):
            colour = palette[band_of(rank, k)][1]
            tip = "missed" if rank == MISSED else ("no state" if rank < 0 else f"rank {rank}")
            out.append(f'<rect x="{grid_x + r * _CELL_W}" y="{y}" width="{_CELL_W - 1}" height="{_CELL_H - 1}" '
                       f'fill="{colour}"><title>{xml(line.id)} run {r + 1} ({xml(runs[r].short)}): '
                       f'{tip}</title></rect>')
        flag = _flag(line, history)
        if flag:
            out.append(f'<text x="{grid_x + len(runs) * _CELL_W + 6}" y="{y + 11}" font-size="11">'
                       f'{xml(flag)}</text>')
    y = grid_y + len(top) * _CELL_H
    if rest:
        out.extend(_summary(history, rest, grid_x, y + 22, summary_h - 30))
        y += summary_h
    out.append(f'<text x="{grid_x}" y="{y + 18}" font-size="10">runs oldest to newest; '
               f'last run {xml(runs[-1].short) if runs else ""}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _summary(history: History, rest: list[QuestionLine], x0: int, y0: int, h: int) -> list[str]:
    """The questions below the shown ones: per run, the share of them in each band."""
    k, palette = history.k, bands(history.k)
    out = [f'<text x="{x0 - 6}" y="{y0 - 6}" text-anchor="end" font-size="11">'
           f'the other {len(rest):,}</text>',
           f'<text x="{x0 - 6}" y="{y0 + 8}" text-anchor="end" font-size="10">'
           f'(share per band)</text>']
    ranks = np.array([line.ranks for line in rest], dtype=np.int64)
    band = np.select([ranks < 0, ranks == MISSED, ranks == 1, ranks <= k, ranks <= 3 * k], [5, 4, 0, 1, 2], 3)
    for r in range(len(history.runs)):
        counts = np.bincount(band[:, r], minlength=len(palette)).tolist()
        y = float(y0 + h)
        for b, count in enumerate(counts):
            if not count:
                continue
            part = h * count / len(rest)
            y -= part
            out.append(f'<rect x="{x0 + r * _CELL_W}" y="{y:.2f}" width="{_CELL_W - 1}" height="{part:.2f}" '
                       f'fill="{palette[b][1]}"><title>run {r + 1}: {count:,} {xml(palette[b][0])}'
                       f'</title></rect>')
    return out


_PANEL_W, _PANEL_H, _PANELS_PER_ROW = 260, 130, 3


def trend_lines(history: History, trends: dict[str, dict[str, list[TagPoint]]], metric: str,
                limit: int = 12) -> str:
    """One small panel per tag (all questions first, then the tags that lost most from
    their first run to their last): ``metric`` over the runs, a move beyond noise drawn
    as a filled dot (red down, green up)."""
    tags = [t for t in trends if t != ALL and any(p.mean is not None for p in trends[t][metric])]
    tags.sort(key=lambda t: (_change(trends[t][metric]), t))
    shown = ([ALL] if ALL in trends else []) + tags[: limit - 1]
    rows = (len(shown) + _PANELS_PER_ROW - 1) // _PANELS_PER_ROW
    width, height = _PANELS_PER_ROW * _PANEL_W + 16, 40 + rows * _PANEL_H + 20
    out = open_chart(width, height, f"{metric} per tag over {len(history.runs)} runs (dot: beyond noise)")
    for i, tag in enumerate(shown):
        x0 = 8 + (i % _PANELS_PER_ROW) * _PANEL_W
        y0 = 40 + (i // _PANELS_PER_ROW) * _PANEL_H
        out.extend(_panel(tag, trends[tag][metric], x0, y0))
    if len(tags) > len(shown) - 1:
        out.append(f'<text x="8" y="{height - 6}" font-size="10">'
                   f'+{len(tags) - (len(shown) - 1)} more tags in --format json</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _change(points: list[TagPoint]) -> float:
    means = [p.mean for p in points if p.mean is not None]
    return means[-1] - means[0] if means else 0.0


def _panel(tag: str, points: list[TagPoint], x0: int, y0: int) -> list[str]:
    plot_x, plot_y, w, h = x0 + 34, y0 + 22, _PANEL_W - 50, _PANEL_H - 50
    n = max(points[-1].n if points else 0, max((p.n for p in points), default=0))
    out = [f'<text x="{x0}" y="{y0 + 12}" font-weight="bold">{xml(tag[:32])}</text>',
           f'<text x="{x0 + _PANEL_W - 20}" y="{y0 + 12}" text-anchor="end" font-size="10">n={n:,}</text>',
           f'<rect x="{plot_x}" y="{plot_y}" width="{w}" height="{h}" fill="none" stroke="#d0d7de"/>']
    for value in (0.0, 0.5, 1.0):
        y = plot_y + h * (1 - value)
        out.append(f'<text x="{plot_x - 4}" y="{y + 4}" text-anchor="end" font-size="10">{value:.1f}</text>')
    step = w / max(len(points) - 1, 1)
    xy = [(plot_x + i * step, plot_y + h * (1 - p.mean), p) for i, p in enumerate(points) if p.mean is not None]
    if len(xy) > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in xy)
        out.append(f'<polyline points="{path}" fill="none" stroke="#0969da" stroke-width="1.5"/>')
    for x, y, p in xy:
        if p.significant:
            colour = "#cf222e" if (p.delta or 0) < 0 else "#1a7f37"
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}">'
                       f'<title>{p.delta:+.3f} beyond noise</title></circle>')
    if xy:
        out.append(f'<text x="{plot_x + w}" y="{plot_y + h + 14}" text-anchor="end" font-size="10">'
                   f'last {xy[-1][2].mean:.3f}</text>')
    return out
