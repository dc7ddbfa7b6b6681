"""Generated candidates: the chunk sample, reading a model's answer, the screen."""

import pytest

from ci_eval.core.gold.fingerprint import shingles
from ci_eval.core.gold.generation import Malformed, Source, copies, parse_questions, prompt, sample_sources, screen

CHUNKS = [Source(f"{d}#{i}", d, f"text {d} {i}") for d in ("a", "b", "c") for i in range(4 if d == "a" else 1)]


def test_the_sample_takes_one_chunk_of_each_document_before_a_second_of_any():
    got = sample_sources(CHUNKS, 5, seed=1)
    assert sorted(s.doc for s in got[:3]) == ["a", "b", "c"] and [s.doc for s in got[3:]] == ["a", "a"]
    assert len({s.id for s in got}) == 5
    assert sample_sources(CHUNKS, 5, seed=1) == got
    assert len(sample_sources(CHUNKS, 50, seed=1)) == len(CHUNKS)


def test_the_prompt_fills_text_and_count_and_leaves_other_braces():
    assert prompt('{"questions": []} {count} / {text}', CHUNKS[0], 2) == '{"questions": []} 2 / text a 0'


@pytest.mark.parametrize("content, expected", [
    ('{"questions": ["What is  lift?", " "]}', ["What is lift?"]),
    ('["a?", "b?"]', ["a?", "b?"]),
    ('```json\n{"questions": ["a?"]}\n```', ["a?"]),
    ('Here you go: {"questions": ["a?"]} Enjoy!', ["a?"]),
])
def test_answers_in_the_shapes_models_give(content, expected):
    assert parse_questions(content) == expected


@pytest.mark.parametrize("content", ["no json here", '{"questions": [1, 2]}', '{"questions": "a"}', '{"q": '])
def test_answers_without_a_list_of_questions_are_malformed(content):
    with pytest.raises(Malformed):
        parse_questions(content)


def test_copying_is_half_the_questions_shingles_in_the_chunk():
    chunk = "the boundary layer separates from the wing at high angles of attack"
    copied = "the boundary layer separates from the wing why"
    own = set(shingles(copied))
    assert len(own & set(shingles(chunk))) / len(own) >= 0.5 and copies(copied, chunk)
    assert not copies("why does flow leave a wing surface at steep angles", chunk)


def test_the_screen_drops_copies_repeats_and_the_gold_sets_questions_in_order():
    src = Source("a#0", "a", "lift grows with the angle of attack until the wing stalls")
    items = [("lift grows with the angle of attack until", src), ("why do wings stall", src),
             ("Why do wings stall?", src), ("what raises the maximum lift coefficient", src), ("", src)]
    got = screen(items, known=["What raises the maximum lift coefficient?"], threshold=0.5)
    assert [g.dropped for g in got] == ["copies its chunk", None, "near-duplicate", "near a gold question", "empty"]
