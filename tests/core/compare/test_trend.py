from ci_eval.core.artefact.artefact import read_artefact
from ci_eval.core.compare.trend import render_trend_svg, trend_series


def head_with_history():
    return read_artefact(raw_head())


def raw_head():
    return {
        "k": 5,
        "git": {"sha": "c" * 40},
        "summary": {"overall": {"means": {"hit@5": 0.8, "mrr": 0.5}}},
        "history": [
            {"sha": "a" * 40, "means": {"hit@5": 0.6, "mrr": 0.4}},
            {"sha": "b" * 40, "means": {"hit@5": 0.7}},  # mrr was not measured on that run
        ],
    }


def test_series_put_this_run_last_and_keep_gaps():
    labels, series = trend_series(head_with_history(), ["hit@5", "mrr"])
    assert labels == ["aaaaaaa", "bbbbbbb", "this run"]
    assert series == {"hit@5": [0.6, 0.7, 0.8], "mrr": [0.4, None, 0.5]}


def test_svg_plots_each_point_and_labels_the_last_value():
    svg = render_trend_svg(head_with_history(), ["hit@5", "mrr"])
    assert svg.count("<circle") == 5  # 3 + 2 measured points
    assert ">hit@5 0.800<" in svg and ">mrr 0.500<" in svg
    assert svg.count("<polyline") == 2
    # [0, 1] maps onto the plot band: 0.8 sits 80% of the way up from the bottom line (210)
    # to the top line (40).
    assert f'cy="{210 - 0.8 * 170:.2f}"' in svg


def test_svg_escapes_metric_names_and_is_deterministic():
    raw = raw_head()
    raw["summary"]["overall"]["means"]["<b>"] = 0.1
    head = read_artefact(raw)
    a = render_trend_svg(head, ["<b>"])
    assert "<b>" not in a and "&lt;b&gt; 0.100" in a
    assert a == render_trend_svg(head, ["<b>"])
