"""A sweep's table rendered: markdown against golden files, JSON and CSV read back by
their own parsers and compared with the table, the chart well-formed and escaped."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from suite_paths import GOLDEN

from ci_eval.core.compare.sweep import RowValues, sweep_table
from ci_eval.core.report.render_sweep import render_csv, render_json, render_markdown
from ci_eval.core.report.sweep_chart import sweep_svg

IDS = tuple(f"q{i}" for i in range(40))
METRICS = ("recall@5", "mrr")


def _row(label, recall, mrr):
    return RowValues(label, IDS, {"recall@5": np.asarray(recall, float), "mrr": np.asarray(mrr, float)})


def _cases():
    base = [1.0] * 20 + [0.0] * 20
    ladder = [1.0] * 26 + [0.5] * 4 + [0.0] * 10
    top = [1.0] * 36 + [0.0] * 4
    return {
        "sweep_best": [_row("chunks 512", base, [0.5] * 40), _row("headings", ladder, [0.6] * 40),
                       _row("headings + <b>rrf</b> | @team", top, [0.75] * 40)],
        "sweep_not_separable": [_row("bm25", base, [0.5] * 40),
                                _row("bm25 stem", [1.0] * 21 + [0.0] * 19, [0.5] * 40)],
    }


@pytest.mark.parametrize("name", sorted(_cases()))
def test_golden(name, regen_golden):
    md = render_markdown(sweep_table(_cases()[name], METRICS))
    path = GOLDEN / f"{name}.md"
    if regen_golden:
        path.write_text(md, encoding="utf-8")
    assert path.is_file(), f"missing {path.name}: run pytest --regen-golden and review it"
    assert md == path.read_text(encoding="utf-8")


def test_markdown_names_the_best_or_the_questions_needed():
    best = render_markdown(sweep_table(_cases()["sweep_best"], METRICS))
    assert "**Best: row 3" in best and "<b>" not in best and "@team" not in best
    close = render_markdown(sweep_table(_cases()["sweep_not_separable"], METRICS))
    table = sweep_table(_cases()["sweep_not_separable"], METRICS)
    assert (f"the top two (bm25 stem; bm25) are not separable on 40 questions; about "
            f"{table.best.needed:,} would separate a difference of 0.025") in close


def test_json_and_csv_carry_the_table():
    table = sweep_table(_cases()["sweep_best"], METRICS)
    data = json.loads(render_json(table))
    assert [r["means"]["recall@5"] for r in data["rows"]] == [r.means["recall@5"] for r in table.rows]
    assert data["best"]["top"] == 3 and data["best"]["separated"] is True
    lines = list(csv.DictReader(io.StringIO(render_csv(table), newline="")))
    assert [line["label"] for line in lines] == [r.label for r in table.rows]
    second = table.rows[1].tests["mrr"]
    assert float(lines[1]["mrr delta"]) == second.delta
    assert float(lines[1]["mrr p_holm"]) == second.p_adjusted
    assert lines[1]["mrr significant"] == str(second.significant).lower()
    assert lines[0]["mrr delta"] == ""


def test_the_chart_is_one_dot_per_row_and_metric_and_escapes_labels():
    table = sweep_table(_cases()["sweep_best"], METRICS)
    svg = sweep_svg(table)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}circle")) == len(table.rows) * len(METRICS)
    # a whisker per row after the first, per metric
    whiskers = [e for e in root.findall(f"{ns}line") if e.get("stroke-width") == "2"]
    assert len(whiskers) == (len(table.rows) - 1) * len(METRICS)
    assert "<b>" not in svg


def test_the_chart_s_whiskers_stay_on_their_axis():
    import re

    # row 1 at 0.05: row 2's interval around it reaches below 0, where the axis ends
    low = [1.0] * 2 + [0.0] * 38
    noisy = [0.0] * 40  # two questions lost: the interval of the change reaches below -0.05
    svg = sweep_svg(sweep_table([_row("a", low, low), _row("b", noisy, low)], METRICS))
    panels = [float(v) for v in re.findall(r'<line x1="([\d.]+)" y1="\d+" x2="[\d.]+" y2="\d+" stroke="#444"', svg)]
    whiskers = re.findall(r'<line x1="([\d.]+)" y1="[\d.]+" x2="([\d.]+)" y2="[\d.]+" stroke="#(?:1a7f37|d1242f|'
                          r'57606a)" stroke-width="2"/>', svg)
    assert len(whiskers) == 2 and len(panels) == 2
    for x1, x2 in whiskers:
        assert any(x0 <= float(x1) <= float(x2) <= x0 + 260 for x0 in panels), (x1, x2, panels)
