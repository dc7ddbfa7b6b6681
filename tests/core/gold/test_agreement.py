"""Cohen's kappa, its interval and the confusion table, checked against derivations by hand."""

import math

import pytest

from ci_eval.core.gold.agreement import agreement, confusion, kappa_of_table, record_suggestion, suggestion_pairs


def test_a_two_by_two_table_worked_out_by_hand():
    # 50 chunks, suggested (rows) x given (columns), grades 0 and 1:
    #                 given 0   given 1
    #   suggested 0      20         5      rows: p0. = 25/50 = .5
    #   suggested 1      10        15            p1. = 25/50 = .5
    #   columns:   p.0 = .6   p.1 = .4
    # observed po = (20 + 15) / 50 = .7; by chance pe = .5 * .6 + .5 * .4 = .5;
    # kappa = (.7 - .5) / (1 - .5) = .4.
    # Fleiss-Cohen-Everitt variance, with 1 - kappa = .6:
    #   diagonal: .4 * (1 - (.5 + .6) * .6)^2 + .3 * (1 - (.5 + .4) * .6)^2
    #           = .4 * .34^2 + .3 * .46^2 = .04624 + .06348 = .10972
    #   off the diagonal: .6^2 * (.1 * (p.0 + p1.)^2 + .2 * (p.1 + p0.)^2)
    #           = .36 * (.1 * 1.1^2 + .2 * .9^2) = .36 * (.121 + .162) = .10188
    #   less (kappa - pe * (1 - kappa))^2 = (.4 - .3)^2 = .01
    #   over n * (1 - pe)^2 = 50 * .25 = 12.5:  var = .2016 / 12.5 = .016128
    # se = sqrt(.016128) = .126996; interval .4 -+ 1.96 * se = .1511 to .6489.
    pairs = [(0, 0)] * 20 + [(0, 1)] * 5 + [(1, 0)] * 10 + [(1, 1)] * 15
    a = agreement(pairs, grades=(0, 1))
    assert a.table == ((20, 5), (10, 15))
    assert a.n == 50
    assert a.observed == pytest.approx(0.7) and a.expected == pytest.approx(0.5)
    assert a.kappa == pytest.approx(0.4)
    se = math.sqrt(0.016128)
    assert a.low == pytest.approx(0.4 - 1.959964 * se, abs=1e-6)
    assert a.high == pytest.approx(0.4 + 1.959964 * se, abs=1e-6)
    assert (round(a.low, 4), round(a.high, 4)) == (0.1511, 0.6489)


def test_the_four_grades_table_and_its_dict():
    # Suggested, given: (2, 2) twice, (0, 1), (1, 1). po = 3/4; rows .25 .25 .5 0,
    # columns 0 .5 .5 0; pe = .25 * .5 + .5 * .5 = 3/8; kappa = (3/4 - 3/8) / (5/8) = .6.
    a = agreement([(2, 2), (0, 1), (2, 2), (1, 1)])
    assert a.table == ((0, 1, 0, 0), (0, 1, 0, 0), (0, 0, 2, 0), (0, 0, 0, 0))
    assert a.kappa == pytest.approx(0.6)
    shown = a.as_dict()
    assert shown["kappa"] == 0.6 and shown["pairs"] == 4 and shown["confusion"][2] == [0, 0, 2, 0]
    assert shown["rows"] == "suggested" and shown["columns"] == "given"
    assert -1 <= shown["interval95"][0] <= 0.6 <= shown["interval95"][1] <= 1


def test_perfect_agreement_has_a_zero_width_interval_and_no_pairs_no_kappa():
    a = agreement([(0, 0), (3, 3), (3, 3), (1, 1)])
    assert (a.kappa, a.low, a.high) == (pytest.approx(1.0), pytest.approx(1.0), pytest.approx(1.0))
    assert agreement([]).kappa is None and agreement([]).n == 0
    # Every pair in one grade on both sides: chance agreement is total, kappa is 0/0.
    assert agreement([(2, 2), (2, 2)]).kappa is None
    assert kappa_of_table(((0, 0), (0, 0))) == (None, None, None, None, None)


def test_agreement_below_chance_is_negative_and_clipped():
    a = agreement([(0, 1), (1, 0)], grades=(0, 1))
    assert a.kappa == pytest.approx(-1.0) and a.low == -1.0


def test_a_grade_outside_the_table_is_an_error():
    with pytest.raises(KeyError):
        confusion([(4, 0)], (0, 1, 2, 3))


def test_the_suggestion_is_recorded_beside_the_grade_and_the_agreement_in_the_provenance():
    doc = {"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": {"x": 2, "y": 1}}],
           "provenance": {"judgements": {"q1": {"by": "Ann", "at": "T", "chunks": {
               "x": {"grade": 2, "by": "Ann", "at": "T", "suggested": 2},
               "y": {"grade": 1, "by": "Ann", "at": "T"},
               "z": {"grade": None, "by": "Ann", "at": "T", "suggested": 3}}}}}}
    assert suggestion_pairs(doc) == [(2, 2)]  # y has no suggestion, z no grade
    new = record_suggestion(doc, "q1", "y", 0, "command judge")
    assert "suggested" not in doc["provenance"]["judgements"]["q1"]["chunks"]["y"]  # the argument is untouched
    assert new["provenance"]["judgements"]["q1"]["chunks"]["y"] == {"grade": 1, "by": "Ann", "at": "T",
                                                                      "suggested": 0}
    assert new["questions"] == doc["questions"]  # a suggestion is never a grade
    recorded = new["provenance"]["suggestions"]
    assert recorded["judge"] == "command judge"
    assert recorded["agreement"]["pairs"] == 2 and recorded["agreement"]["confusion"][0][1] == 1
