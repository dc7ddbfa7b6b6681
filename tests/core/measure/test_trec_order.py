"""Tie order of one ranking: score descending, then id descending in UTF-8 byte order
(trec_eval's)."""

from __future__ import annotations

import itertools
import math

import pytest

from ci_eval.core.measure.trec_order import Ranking, order
from ci_eval.errors import InputError


def test_orders_by_score_descending():
    r = order([("a", 0.1), ("b", 0.9), ("c", 0.5)])
    assert r == Ranking(("b", "c", "a"), (0.9, 0.5, 0.1))


def test_ties_break_by_id_descending():
    assert order([("a", 1.0), ("c", 1.0), ("b", 1.0)]).ids == ("c", "b", "a")


def test_ties_compare_utf8_bytes_not_code_points_or_case():
    # "Z" (0x5A) < "a" (0x61) < "é" (0xC3 0xA9): byte order, as strcmp.
    assert order([("a", 1.0), ("é", 1.0), ("Z", 1.0)]).ids == ("é", "a", "Z")
    # A prefix sorts before the longer id, so it comes after it in descending order.
    assert order([("doc1", 2.0), ("doc10", 2.0)]).ids == ("doc10", "doc1")


def test_order_does_not_depend_on_input_order():
    pairs = [("a", 1.0), ("b", 1.0), ("c", 0.5), ("d", 2.0)]
    results = {order(p).ids for p in itertools.permutations(pairs)}
    assert results == {("d", "b", "a", "c")}


def test_near_equal_scores_are_distinct():
    # 1.00000001 and 1.0 differ as doubles: no tie, "a" first despite its smaller id.
    assert order([("b", 1.0), ("a", 1.00000001)]).ids == ("a", "b")


def test_empty_and_non_finite():
    assert order([]) == Ranking((), ())
    with pytest.raises(InputError, match="non-finite"):
        order([("a", math.nan)])


def test_ranking_needs_one_score_per_id():
    with pytest.raises(ValueError):
        Ranking(("a",), ())
