"""`ci-eval label --demo --demo-candidates`: mined and stand-in candidates, offline."""

from __future__ import annotations

import json
from importlib import resources

from ci_eval.core.gold.candidates import normalise
from ci_eval.core.gold.mining import terms
from ci_eval.demo.candidates import demo_candidates, standin_questions
from ci_eval.demo.corpus import load_chunks
from ci_eval.label.app import Options, build_session


def demo_questions() -> list[str]:
    gold = json.loads(resources.files("ci_eval.demo").joinpath("gold.json").read_text())
    return [q["question"] for q in gold["questions"]]


def similar(a: str, b: str) -> float:
    x, y = set(terms(normalise(a))), set(terms(normalise(b)))
    return len(x & y) / len(x | y)


def test_candidates_are_mined_and_written_none_near_the_gold_set_or_each_other():
    known = demo_questions()
    got = demo_candidates(known)
    log = resources.files("ci_eval.demo").joinpath("asked.log").read_text().splitlines()
    titles = {c.title.strip(" .").lower() for c in load_chunks()}
    mined = [q for q in got if q in log]
    written = [q for q in got if q not in log]
    assert mined and written and got == mined + written
    assert all(q.startswith("How does ") and q[len("How does "):-len(" work?")] in titles for q in written)
    assert all(similar(q, k) < 0.5 for q in got for k in known)
    assert all(similar(a, b) < 0.5 for i, a in enumerate(got) for b in got[i + 1:])
    # asked in the log but already a demo question
    assert "How do I install numpy on Windows?" in log and "How do I install numpy on Windows?" not in got


def test_the_stand_in_samples_sections_across_topics():
    picked = standin_questions(6)
    assert len({s.doc for _, s in picked}) == 6


def test_the_demo_session_offers_them_to_keep_or_bin(tmp_path):
    session = build_session(Options(gold=str(tmp_path / "demo-gold.json"), demo=True, demo_candidates=True,
                                    judge="Ann", browser=False))
    assert session.candidates == demo_candidates(demo_questions())
    shown = [c["question"] for c in session.state()["candidates"]]
    assert shown == session.candidates
