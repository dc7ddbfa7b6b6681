"""The two-sided abstention rule: false answers and false "not found", McNemar on both."""

from __future__ import annotations

import pytest
from factories import artefact, spec
from factories import ranked_with_gold_at as at

from ci_eval.core.compare.diff import diff
from ci_eval.core.compare.gate import GatePolicy, evaluate_gate
from ci_eval.core.compare.stats import holm, mcnemar_exact
from ci_eval.errors import InputErrors

CUT = 5.0  # the factories' abstain_below: a top score under it abstains


def _run(answerable_top: list[float], unanswerable_top: list[float]):
    qs = [spec(f"a{i:02d}", ["g"], at(1), top=t) for i, t in enumerate(answerable_top)]
    qs += [spec(f"u{i:02d}", [], at(None), unanswerable=True, top=t)
           for i, t in enumerate(unanswerable_top)]
    return artefact(qs, abstain_below=CUT)


BASE = _run([10.0] * 20, [1.0] * 20)  # answers the answerable, abstains on the rest


def _abstention(head, base=BASE):
    r = evaluate_gate(GatePolicy.from_mapping({"abstention": True}), diff(base, head))
    return r, {o.subject: o for o in r.outcomes if o.rule == "abstention"}


def test_an_always_answer_retriever_fails_on_false_answers():
    r, by = _abstention(_run([10.0] * 20, [10.0] * 20))
    fa = by["false answers"]
    assert not r.passed and fa.failed and len(fa.question_ids) == 20
    assert (fa.threshold, fa.value) == (0.0, 20.0)  # base wrong, head wrong
    assert not by['false "not found"'].failed


def test_an_always_abstain_retriever_fails_on_false_not_found():
    r, by = _abstention(_run([1.0] * 20, [1.0] * 20))
    assert not r.passed and by['false "not found"'].failed
    assert not by["false answers"].failed


def test_the_same_behaviour_passes_and_a_few_moves_are_noise():
    r, _ = _abstention(_run([10.0] * 20, [1.0] * 20))
    assert r.passed
    # 3 new false answers, 1 fixed: McNemar p(3, 1), Holm with the other side's p = 1
    base = _run([10.0] * 20, [1.0] * 19 + [10.0])
    head = _run([10.0] * 20, [10.0] * 3 + [1.0] * 17)
    r, by = _abstention(head, base)
    fa = by["false answers"]
    assert r.passed and "no significant rise" in fa.message
    assert f"p={holm([mcnemar_exact(3, 1), 1.0])[0]:.3f}" in fa.message


def test_abstention_needs_a_baseline_and_a_cutoff():
    r, by = _abstention(_run([10.0] * 20, [1.0] * 20), base=None)
    assert r.passed and by[""].status == "not applicable"
    no_cut = artefact([spec("a00", ["g"], at(1))] * 1 + [spec(f"a{i:02d}", ["g"], at(1)) for i in range(1, 20)],
                      abstain_below=None)
    r = evaluate_gate(GatePolicy.from_mapping({"abstention": True}), diff(no_cut, no_cut))
    assert not r.passed and "no abstain_below" in r.failures[0].message


def test_abstention_must_be_true_or_false():
    with pytest.raises(InputErrors) as e:
        GatePolicy.from_mapping({"abstention": "yes"})
    assert "abstention" in str(e.value)
