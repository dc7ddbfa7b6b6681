"""Mining candidates: counting, folding near-duplicates, dropping the known, sampling."""

import random
from collections import Counter

import pytest

from ci_eval.core.gold import mining
from ci_eval.core.gold.candidates import normalise
from ci_eval.core.gold.mining import BAND_NAMES, band_of, mine, terms

WORDS = ("wing lift drag flutter boundary layer shock wave nozzle plate heat transfer panel "
         "buckling cylinder supersonic laminar turbulent separation vortex").split()


def jaccard(a: str, b: str) -> float:
    x, y = set(terms(normalise(a))), set(terms(normalise(b)))
    return len(x & y) / len(x | y)


def test_terms_are_content_words_and_adjacent_pairs():
    assert terms("how does the wing lift") == sorted(
        {"wing", "lift", "how does", "does the", "the wing", "wing lift"})
    assert terms("how is it") == ["how is", "is it"]
    assert terms("what") == ["what"]


def test_repeats_are_one_question_asked_often_in_its_most_typed_spelling():
    log = ["Why does a wing stall?", "why does a wing stall", "why does a wing stall", "What is flutter?"]
    got = mine(log, count=5, topics=1)
    assert got.read == 4 and got.distinct == 2 and got.folded == 0
    by_question = {g.question: g.frequency for g in got.groups}
    assert by_question == {"why does a wing stall": 3, "What is flutter?": 1}
    assert got.groups[0].band == band_of(3) == 1 and BAND_NAMES[1] == "2-3"


def test_a_near_duplicate_folds_into_the_more_asked_question_and_adds_its_askings():
    asked = "how does the boundary layer separate on a flat plate"
    typo = "how does the boundary layer sepaarte on a flat plate"
    other = "what drives flutter of a thin supersonic panel"
    assert jaccard(asked, typo) >= 0.5 > jaccard(asked, other)
    got = mine([asked, asked, typo, other], count=5, topics=1)
    assert {g.question: (g.frequency, g.members) for g in got.groups} == {
        asked: (3, (asked, typo)), other: (1, (other,))}


def edited(rng: random.Random, words: list[str]) -> list[str]:
    out = list(words)
    for _ in range(rng.randint(0, 4)):
        i, edit = rng.randrange(len(out)), rng.choice(("drop", "add", "replace"))
        if edit == "drop" and len(out) > 3:
            out.pop(i)
        elif edit == "add":
            out.insert(i, rng.choice(WORDS))
        else:
            out[i] = rng.choice(WORDS)
    return out


@pytest.mark.parametrize("exhaustive", [0, mining.EXHAUSTIVE])
def test_folded_pairs_are_as_similar_as_the_threshold_and_very_similar_pairs_always_fold(monkeypatch, exhaustive):
    """Against the similarity computed here with Python sets: a fold never happens below the
    threshold; at 0.8 or more the bands (EXHAUSTIVE 0) catch every pair in this sample, and
    comparing every pair catches every one at the threshold."""
    monkeypatch.setattr(mining, "EXHAUSTIVE", exhaustive)
    rng = random.Random(5)
    seen = Counter()
    for _ in range(200):
        a = [rng.choice(WORDS) for _ in range(rng.randint(4, 9))]
        b = edited(rng, a)
        left, right = " ".join(a), " ".join(b)
        if normalise(left) == normalise(right):
            continue
        got = mine([left, left, right], count=2, topics=1)
        folded = len(got.groups) == 1
        sim = jaccard(left, right)
        seen[(folded, sim >= 0.5)] += 1
        assert not folded or sim >= 0.5, (left, right, sim)
        assert folded or sim < (0.8 if exhaustive == 0 else 0.5), (left, right, sim)
    assert seen[(True, True)] and seen[(False, False)]  # the sample holds both kinds


def test_the_gold_sets_questions_and_their_near_duplicates_are_dropped():
    known = ["How does the boundary layer separate on a flat plate?"]
    log = ["how does the boundary layer separate on a flat plate", "how does the boundary layer sepaarte on a flat plate",
           "what drives flutter of a thin supersonic panel"]
    got = mine(log, known, count=5, topics=1)
    assert [g.question for g in got.groups] == ["what drives flutter of a thin supersonic panel"]
    assert sorted(got.known) == sorted(normalise(t) for t in log[:2])


def topic_log(rng: random.Random) -> list[str]:
    aero = "wing lift drag stall airfoil flap".split()
    heat = "heat conduction slab temperature flux insulation".split()
    log = []
    for vocab in (aero, heat):
        for _ in range(40):
            words = rng.sample(vocab, 4)
            log += [" ".join(words)] * rng.choice([1, 1, 1, 2, 5, 9])
    return log


def test_topics_separate_two_vocabularies():
    rng = random.Random(1)
    got = mine(topic_log(rng), count=10, topics=2, threshold=0.99)
    aero = set("wing lift drag stall airfoil flap".split())
    topic_of = {g.question: g.topic for g in got.groups}
    by_vocab = {bool(set(q.split()) & aero): t for q, t in topic_of.items()}
    assert len(set(topic_of.values())) == 2
    assert all(t == by_vocab[bool(set(q.split()) & aero)] for q, t in topic_of.items())


def test_the_sample_visits_every_stratum_before_any_twice_and_is_reproducible():
    rng = random.Random(2)
    log = topic_log(rng)
    got = mine(log, count=30, topics=2, threshold=0.99, seed=4)
    strata = {(g.topic, g.band) for g in got.groups}
    first = [(g.topic, g.band) for g in got.chosen[:len(strata)]]
    assert len(got.chosen) == 30 and sorted(first) == sorted(strata)
    assert mine(log, count=30, topics=2, threshold=0.99, seed=4).chosen == got.chosen
    assert mine(log, count=30, topics=2, threshold=0.99, seed=5).chosen != got.chosen


@pytest.mark.parametrize("count", [1, 500])
def test_count_caps_the_sample_and_a_small_log_gives_all_it_has(count):
    got = mine(topic_log(random.Random(3)), count=count, topics=3, threshold=0.99)
    assert len(got.chosen) == min(count, len(got.groups))
    assert len({g.question for g in got.chosen}) == len(got.chosen)
