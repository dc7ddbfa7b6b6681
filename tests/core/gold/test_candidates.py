import hashlib

import pytest

from ci_eval.core.gold.candidates import apply_bin, apply_keep, candidate_id, normalise, review
from ci_eval.core.gold.judgement import Stamp
from ci_eval.errors import InputError

ANN = Stamp("Ann", "2026-12-01T09:00:00Z")


def gold():
    return {"schema_version": 1, "questions": [{"id": "q1", "question": "How do I rotate a key?", "gold": ["k"]}]}


def test_normalised_text_ignores_case_punctuation_and_spacing():
    assert normalise("  How do I ROTATE a key?! ") == "how do i rotate a key"
    assert normalise("ﬁle_name") == "file name"  # NFKC folds the ligature


def test_ids_are_stable_and_derived_from_the_normalised_text():
    assert candidate_id("How do I rotate a key?") == candidate_id("how do i rotate a key")
    expected = "c-" + hashlib.sha256(b"how do i rotate a key").hexdigest()[:12]
    assert candidate_id("How do I rotate a key?") == expected


def test_near_duplicates_of_existing_questions_are_flagged_and_repeats_appear_once():
    texts = ["how do I rotate a KEY", "What is a token?", "what is a token", "What is a token?"]
    got = review(texts, gold())
    # Equal normalised text is one candidate (one id): the first spelling is the one shown.
    assert [(c.question, c.duplicate_of) for c in got] == [("how do I rotate a KEY", "q1"),
                                                          ("What is a token?", None)]
    assert [c.decided for c in got] == [None, None]


def test_keep_and_bin_are_remembered_for_a_resumed_session():
    kept = apply_keep(gold(), "What is a token?", ANN)
    cid = candidate_id("What is a token?")
    assert kept["provenance"]["pending"] == [{"id": cid, "question": "What is a token?", "gold": {}}]
    binned = apply_bin(kept, "Tell me a joke", ANN)
    assert binned["provenance"]["binned"][candidate_id("Tell me a joke")]["by"] == "Ann"
    decided = {c.question: c.decided for c in review(["What is a token?", "Tell me a joke", "New?"], binned)}
    assert decided == {"What is a token?": "kept", "Tell me a joke": "binned", "New?": None}
    with pytest.raises(InputError, match="already kept"):
        apply_bin(binned, "What is a token?", ANN)
    # Keeping a binned candidate changes its mind: it leaves the binned list.
    rekept = apply_keep(binned, "Tell me a joke", ANN)
    assert "binned" not in rekept["provenance"]


def test_a_keep_or_a_bin_taken_back_leaves_the_file_as_before_it():
    from ci_eval.core.gold.candidates import apply_undecide
    from ci_eval.core.gold.judgement import apply_grade

    start = gold()
    kept = apply_keep(start, "What is a token?", ANN)
    binned = apply_bin(kept, "Tell me a joke", ANN)
    assert apply_undecide(binned, candidate_id("Tell me a joke")) == kept
    assert apply_undecide(kept, candidate_id("What is a token?")) == start
    with pytest.raises(InputError, match="neither kept nor binned"):
        apply_undecide(start, candidate_id("New?"))
    # Once a chunk of the kept question is judged, taking it back would lose that judgement.
    judged = apply_grade(kept, candidate_id("What is a token?"), "a", 0, ANN)
    with pytest.raises(InputError, match="stays kept"):
        apply_undecide(judged, candidate_id("What is a token?"))
