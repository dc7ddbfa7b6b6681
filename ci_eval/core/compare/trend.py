"""The headline metrics over the base branch's recent runs, as an SVG line chart.

The comment carries a one-line sparkline; this is the picture beside the report (in the
job's artifact and the demo's output), for when the trend is worth looking at."""

from __future__ import annotations

from ci_eval.core.artefact.artefact import Artefact
from ci_eval.core.svg import open_chart
from ci_eval.core.svg import xml as _xml

COLOURS = ("#2f6fb0", "#c2452d", "#3a9a5b", "#8a5ab8")


def trend_series(head: Artefact, metrics: list[str]) -> tuple[list[str], dict[str, list[float | None]]]:
    """Run labels (short SHAs, this run last) and each metric's values, None where a run
    did not measure it."""
    runs = [(e.sha, dict(e.means)) for e in head.history]
    runs.append((head.header.sha or "", dict(head.summary.overall.means)))
    labels = [(sha[:7] or f"run {i + 1}") for i, (sha, _) in enumerate(runs)]
    labels[-1] = "this run"
    series = {m: [means.get(m) for _, means in runs] for m in metrics}
    return labels, series


def render_trend_svg(head: Artefact, metrics: list[str], title: str = "Headline metrics over recent runs") -> str:
    labels, series = trend_series(head, metrics[: len(COLOURS)])
    w, h, left, right, top, bottom = 640, 260, 48, 130, 40, 210
    n = len(labels)

    def x_of(i: int) -> float:
        return left + (i / (n - 1) if n > 1 else 0.5) * (w - left - right)

    def y_of(v: float) -> float:
        return bottom - v * (bottom - top)  # every headline metric lives in [0, 1]

    out = open_chart(w, h, title)
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y_of(tick)
        out.append(f'<line x1="{left}" y1="{y:.2f}" x2="{w - right}" y2="{y:.2f}" stroke="#eeeeee"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.2f}" text-anchor="end" fill="#555555">{tick:.2f}</text>')
    step = max(1, n // 8)  # at most about eight run labels fit under the axis
    for i, label in enumerate(labels):
        if i % step == 0 or i == n - 1:
            out.append(f'<text x="{x_of(i):.2f}" y="{bottom + 16}" text-anchor="middle" '
                       f'fill="#555555">{_xml(label)}</text>')
    ends = []  # (y of the last point, colour, text): labelled after the lines, spread apart
    for colour, (metric, values) in zip(COLOURS, series.items()):
        points = [(x_of(i), y_of(v)) for i, v in enumerate(values) if v is not None]
        if not points:
            continue
        if len(points) > 1:
            path = " ".join(f"{x:.2f},{y:.2f}" for x, y in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for (x, y), v in zip(points, [v for v in values if v is not None]):
            out.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="3" fill="{colour}"><title>'
                       f'{_xml(metric)} {v:.3f}</title></circle>')
        last = "—" if values[-1] is None else format(values[-1], ".3f")
        ends.append((points[-1][1], colour, f"{metric} {last}"))
    floor = -1e9
    for y, colour, text in sorted(ends):
        y = max(y, floor + 14)  # close values would print their labels on top of each other
        floor = y
        out.append(f'<text x="{w - right + 8}" y="{y + 4:.2f}" fill="{colour}">{_xml(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
