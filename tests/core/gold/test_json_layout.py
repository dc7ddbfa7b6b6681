"""A JSON text patched to a new value keeps every byte of what did not change."""

from __future__ import annotations

import difflib
import json
import random

import pytest

from ci_eval.core.gold.goldformat import dumps_gold_set, gold_text
from ci_eval.core.gold.json_layout import LayoutLost, patch_text


def document(n: int = 6) -> dict:
    return {"schema_version": 1, "index_version": "v1",
            "questions": [{"id": f"q{i}", "question": f"question {i} é?", "gold": {f"c{i}": 1, f"d{i}": 2}}
                          for i in range(n)]}


def mutate(doc: dict, rng: random.Random) -> dict:
    """A copy with a few of the edits a gold-set tool makes: a grade, an id renamed, a key
    removed, a question or a top-level key added."""
    new = json.loads(json.dumps(doc))
    q = rng.choice(new["questions"])
    kind = rng.randrange(5)
    if kind == 0:
        q["gold"][next(iter(q["gold"]))] = 3
    elif kind == 1:
        grade = q["gold"].pop(next(iter(q["gold"])))
        q["gold"]["renamed"] = grade
    elif kind == 2:
        del q["question"]
    elif kind == 3:
        new["questions"].append({"id": "new", "question": "added?", "gold": ["x"]})
    else:
        new["anchors"] = {"c0": {"doc": "d", "hash": "0" * 64}}
    return new


@pytest.mark.parametrize("layout", [{"indent": 2}, {"indent": 4}, {"indent": "\t"}, {},
                                    {"separators": (",", ":")}, {"indent": 2, "ensure_ascii": True}])
def test_a_patch_reads_back_as_the_new_value_and_keeps_the_rest(layout):
    rng = random.Random(5)
    for _ in range(40):
        old = document()
        text = json.dumps(old, **layout)
        new = mutate(old, rng)
        out = patch_text(text, old, new)
        assert json.loads(out) == new
        # Each edit rewrites two lines of the old text at most (a value or a removed member,
        # and the line a new member is written after, which gains a comma); every other
        # line is kept.
        a, b = text.splitlines(), out.splitlines()
        removed = sum(i2 - i1 for op, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False)
                      .get_opcodes() if op != "equal")
        assert removed <= 2


def test_an_unchanged_value_is_the_same_text_byte_for_byte():
    text = '{ "a" : [1,2 ,3],\n\n "b":{"c":  true} }'
    assert patch_text(text, json.loads(text), json.loads(text)) == text


def test_one_and_one_point_oh_and_true_are_different_texts():
    text = '{"a": 1}'
    assert patch_text(text, {"a": 1}, {"a": 1.0}) == '{"a": 1.0}'
    assert patch_text(text, {"a": 1}, {"a": True}) == '{"a": true}'


def test_a_key_given_twice_cannot_be_followed():
    with pytest.raises(LayoutLost):
        patch_text('{"a": 1, "a": 2}', {"a": 2}, {"a": 3})


def test_a_gold_set_in_the_house_layout_is_written_in_it():
    doc = document()
    new = mutate(doc, random.Random(1))
    assert gold_text(new, dumps_gold_set(doc)) == dumps_gold_set(new)
    assert gold_text(new, None) == dumps_gold_set(new)
    # A text that is not JSON any more is replaced in the house layout.
    assert gold_text(new, "{not json") == dumps_gold_set(new)


def test_a_file_with_crlf_line_ends_keeps_them():
    old = document(2)
    text = json.dumps(old, indent=2).replace("\n", "\r\n")
    new = json.loads(json.dumps(old))
    new["anchors"] = {"c0": {"doc": "d"}}
    out = patch_text(text, old, new)
    assert json.loads(out) == new and "\n" not in out.replace("\r\n", "")


@pytest.mark.parametrize("old,new", [
    ({"a": 1, "b": 2, "c": 3}, {"c": 3}),  # the first two members gone
    ({"a": 1, "b": 2, "c": 3}, {}),  # every member gone
    ({"a": [1, 2, 3, 4]}, {"a": [1]}),
    ({"a": {"x": 1, "y": 2, "z": 3}, "b": 1}, {"a": {"z": 3}, "b": 1, "c": [2]}),
])
@pytest.mark.parametrize("indent", [None, 2, 4])
def test_members_removed_together_are_cut_once_each_and_the_layout_kept(old, new, indent):
    text = json.dumps(old, indent=indent)
    out = patch_text(text, old, new)
    assert json.loads(out) == new
    if indent:  # the kept lines keep their indentation
        assert all(line.startswith(" " * indent) or line in "{}" for line in out.splitlines()[1:-1])
