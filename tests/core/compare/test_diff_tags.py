"""Per-tag deltas carry the paired test, every (tag, metric) pair one Holm family."""

from __future__ import annotations

import math

import pytest
from factories import artefact, default_metrics, spec
from factories import ranked_with_gold_at as at

from ci_eval.core.compare.diff import diff
from ci_eval.core.compare.gate import GatePolicy, evaluate_gate
from ci_eval.core.compare.stats import holm
from ci_eval.core.report.render import BaselineInfo, render_markdown
from ci_eval.core.report.render_context import ReportContext


def _pair(lost_in_a: int, moved_in_b: int, n: int = 30):
    """Tag ``a``: ``n`` questions at rank 1, ``lost_in_a`` of them lose it; tag ``b``: ``n``
    at rank 1, ``moved_in_b`` of them go to rank 2 (hit@5 unchanged, mrr down)."""
    base, head = [], []
    for i in range(n):
        base.append(spec(f"a{i:02d}", ["g"], at(1), tags=["a"]))
        head.append(spec(f"a{i:02d}", ["g"], at(None if i < lost_in_a else 1), tags=["a"]))
        base.append(spec(f"b{i:02d}", ["g"], at(1), tags=["b"]))
        head.append(spec(f"b{i:02d}", ["g"], at(2 if i < moved_in_b else 1), tags=["b"]))
    return artefact(base), artefact(head)


def test_each_tag_delta_is_tested_within_the_tag_family():
    d = diff(*_pair(lost_in_a=12, moved_in_b=4))
    tags = {t.tag: t for t in d.tags}
    family = 2 * len(default_metrics(5))  # every tag x metric pair
    a, b = tags["a"].test("hit@5"), tags["b"].test("mrr")
    # hit@5 is a share: McNemar's score statistic 12 / sqrt(12) (Tango's test at zero)
    assert a.p_value == pytest.approx(math.erfc(math.sqrt(6))) and a.family == family
    assert b.p_value == 2 / 2 ** 4 and not b.significant  # 4 moved: never significant
    # the adjusted p-values are Holm's over the whole family, in any order
    everything = [(t.tag, name, x) for t in d.tags for name, x in t.tests]
    expected = holm([x.p_value for _, _, x in everything])
    assert [x.p_adjusted for _, _, x in everything] == expected
    assert a.significant == (a.p_adjusted < 0.05) and a.significant  # 20 * 0.00053 < 0.05


def test_the_tag_table_marks_only_the_corrected_decisions():
    base, head = _pair(lost_in_a=12, moved_in_b=4)
    d = diff(base, head)
    text = render_markdown(ReportContext(d, evaluate_gate(GatePolicy(), d), BaselineInfo(kind="exact")),
                           None)
    table = text[text.index("#### By tag"):]
    row_a = next(line for line in table.splitlines() if line.startswith("| a "))
    row_b = next(line for line in table.splitlines() if line.startswith("| b "))
    assert "▼" in row_a and "▼" not in row_b
    assert "tag × metric pairs" in text  # the family line names the tag family
