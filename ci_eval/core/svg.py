"""The few pieces every hand-written SVG chart here shares."""

from __future__ import annotations


def xml(text: object) -> str:
    """Escape text for an SVG text node or attribute: question ids and metric names are
    the user's, and a chart must not be a way to inject markup."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def open_chart(w: int, h: int, title: str) -> list[str]:
    """The opening lines of a chart: the element, its accessible title, a white page and
    the visible title."""
    return [
        (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
         f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">'),
        f"<title>{xml(title)}</title>",
        f'<rect width="{w}" height="{h}" fill="#ffffff"/>',
        f'<text x="8" y="20" font-size="14" font-weight="bold">{xml(title)}</text>',
    ]
