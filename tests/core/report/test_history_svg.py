"""core/report/history_svg.py: the heat map and the trend lines, as SVG text and in a real
browser (headless Debian chromium through Playwright).

Set CI_EVAL_SCREENSHOT=1 to write the screenshots into docs/images/; otherwise they go to a
temporary folder, so a normal run changes no tracked file."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from chromium import chromium
from suite_paths import DOCS

from ci_eval.core.compare.history import HistoryBuilder, RunMark
from ci_eval.core.report.history_svg import ROWS_SHOWN, band_of, bands, heat_map, trend_lines

K, RUNS = 5, 30


def history_of(questions: int, seed: int = 7, hostile: str | None = None):
    """``questions`` questions over 30 runs: most steady, some breaking, some flapping."""
    rng = np.random.default_rng(seed)
    marks = [RunMark(f"r{r}.json", f"{0xabc0000 + r:07x}" + "0" * 33, f"2026-11-01T{r:02d}:00:00Z", "0") for r in range(RUNS)]
    builder = HistoryBuilder(marks, ("hit@5", "mrr"), K)
    kinds = rng.choice(["steady", "breaks", "flaps"], size=questions, p=[0.9, 0.05, 0.05])
    for q, kind in enumerate(kinds):
        base = int(rng.choice([1, 1, 1, 2, 2, 3, 4, 7, 12]))
        qid = hostile if (hostile and q == 0) else f"q-{q:05d}"
        for r in range(RUNS):
            rank = None if (kind == "breaks" and r >= 17) or (kind == "flaps" and r % 3 == 1) else base
            builder.add(r, qid, ("t1",) if q % 2 else ("t2",), [["g", 1]], False, rank,
                        {"hit@5": float(rank is not None and rank <= K),
                         "mrr": 0.0 if rank is None else 1.0 / rank})
    return builder.build()


def test_every_rank_falls_in_one_band():
    names = [name for name, _ in bands(K)]
    assert len(set(names)) == len(names) == 6
    assert [band_of(r, K) for r in (1, 2, K, K + 1, 3 * K, 3 * K + 1, 0, -1, -2)] == [0, 1, 1, 2, 2, 3, 4, 5, 5]


@pytest.mark.parametrize("questions", [50, 5000])
def test_the_worst_are_rows_and_the_rest_a_summary(questions):
    history = history_of(questions)
    lines = history.lines()
    svg = heat_map(history, lines)
    labels = re.findall(r'text-anchor="end" font-size="11">([^<]*)</text>', svg)
    assert labels[:ROWS_SHOWN] == [line.id for line in lines[:ROWS_SHOWN]]
    assert f"the other {questions - ROWS_SHOWN:,}" in svg
    # each summarised run's bands add up to every question not shown
    counted = [sum(int(c.replace(",", "")) for c in re.findall(rf"<title>run {r + 1}: ([\d,]+) ", svg))
               for r in range(RUNS)]
    assert counted == [questions - ROWS_SHOWN] * RUNS


def test_user_strings_cannot_inject_markup():
    history = history_of(3, hostile='<script>x</script>')
    svg = heat_map(history, history.lines())
    assert "<script>" not in svg and "&lt;script&gt;" in svg


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile"), {"width": 1100, "height": 900}) as context:
        yield context


@pytest.mark.parametrize("questions", [50, 5000])
def test_the_heat_map_reads_in_a_browser(browser, tmp_path, questions):
    history = history_of(questions)
    page = browser.new_page()
    # inside a page, as GitHub and the docs show it (a bare SVG document never settles for a screenshot)
    page.set_content(f"<!doctype html><html><body style='margin:0'>{heat_map(history, history.lines())}</body></html>")
    boxes = page.evaluate("""() => [...document.querySelectorAll('text[text-anchor="end"][font-size="11"]')]
        .map(t => { const b = t.getBBox(); return [b.x, b.y, b.width, b.height]; })""")
    rows = boxes[:ROWS_SHOWN]
    # one label per shown row, none overlapping the next, all inside the picture
    assert len(rows) == ROWS_SHOWN
    assert all(a[1] + a[3] <= b[1] + 0.5 for a, b in zip(rows, rows[1:]))
    size = page.locator("svg").bounding_box()
    assert size["width"] < 1100 and size["height"] < 900  # one screen, whatever the number of questions
    shot = (DOCS / "images" if os.environ.get("CI_EVAL_SCREENSHOT") == "1" else tmp_path) / f"history-{questions}.png"
    shot.parent.mkdir(exist_ok=True)
    page.locator("svg").screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page.close()


def test_trend_lines_mark_the_move_beyond_noise():
    history = history_of(400)
    trends = history.trends()
    svg = trend_lines(history, trends, "hit@5")
    assert svg.count("<polyline") == len(trends)
    marked = sum(p.significant for per in trends.values() for p in per["hit@5"])
    assert marked > 0 and svg.count("<circle") == marked
