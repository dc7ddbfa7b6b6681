"""The block-at-a-time JSON reader agrees with the whole-file one, or gives up."""

import hashlib
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.errors import InputErrors
from ci_eval.inputs.files import SURROGATE_ESCAPE, read_json
from ci_eval.inputs.json_stream import GiveUp, stream_object
from ci_eval.inputs.loaders import load_gold_set


def _blocks(raw: bytes, size: int):
    return iter([raw[i:i + size] for i in range(0, len(raw), size)])


def _read(raw: bytes, size: int):
    taken = []
    head, sha = stream_object(_blocks(raw, size), "questions", lambda v: taken.append(v) or True)
    return head, taken, sha


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(head=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "questions"), _values, max_size=4),
       questions=st.lists(_values, max_size=6), indent=st.sampled_from([None, 0, 2, "\t"]),
       bom=st.booleans(), size=st.integers(1, 9), ascii_only=st.booleans())
def test_any_document_reads_as_the_whole_file_reader_reads_it(tmp_path_factory, head, questions, indent, bom,
                                                              size, ascii_only):
    document = {**head, "questions": questions}
    raw = (b"\xef\xbb\xbf" if bom else b"") + json.dumps(document, indent=indent,
                                                          ensure_ascii=ascii_only).encode("utf-8") + b"\n "
    path = tmp_path_factory.mktemp("doc") / "gold.json"
    path.write_bytes(raw)
    whole, _ = read_json(path, "gold set")
    try:
        got_head, taken, sha = _read(raw, size)
    except GiveUp:  # a \ud83d\ude00 pair is valid; the whole-file reader takes those
        assert re.search(SURROGATE_ESCAPE, raw.decode("utf-8"))
        return
    assert {**got_head, "questions": taken} == whole
    assert sha == hashlib.sha256(raw).hexdigest()


def test_a_number_cut_by_a_block_boundary_is_read_whole():
    raw = b'{"questions": [], "schema_version": 125}'
    cut = raw.index(b"125") + 2  # the first block ends after "12"
    head, _ = stream_object(iter([raw[:cut], raw[cut:]]), "questions", lambda v: True)
    assert head == {"schema_version": 125}


@pytest.mark.parametrize("raw", [
    b'{"questions": [], "a": 1, "a": 2}',  # a top-level key twice
    b'{"questions": [], "questions": []}',
    b'{"questions": [{"id": "q", "id": "r"}]}',  # a key twice inside an element
    b'{"questions": [], "x": NaN}',
    b'{"questions": [], "x": 1e999}',
    b'{"questions": [], "x": ' + b"9" * 5000 + b"}",  # past Python's digit limit
    b'{"questions": ["\\ud800"]}',  # a lone surrogate escape
    b'{"questions": ["\xff"]}',  # not UTF-8
    b'{"questions": [1, 2]',  # cut short
    b'{"questions": [1, 2]} x',  # something after the document
    b'{"questions": [1 2]}',
    b'{"other": []}',  # no questions
    b'[{"questions": []}]',
    b"",
])
def test_anything_the_whole_reader_would_word_makes_it_give_up(raw):
    with pytest.raises(GiveUp):
        _read(raw, 3)


def test_an_element_refused_by_the_taker_gives_up():
    with pytest.raises(GiveUp):
        stream_object(iter([b'{"questions": [1, 2, 3]}']), "questions", lambda v: v < 2)


def _gold(tmp_path, document) -> str:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(document, indent=1))
    return str(path)


def test_a_gold_set_streamed_equals_the_one_read_whole(tmp_path):
    document = {"schema_version": 1, "index_version": "v3", "provenance": {"built_by": "ann"},
                "questions": [{"id": "q1", "question": "a?", "gold": ["c1", "c2"], "tags": ["t"]},
                              {"id": "q2", "question": "b?", "gold": {"c1": 2, "c3": 0}},
                              {"id": "q3", "question": "c?", "gold": [], "unanswerable": True}]}
    path = _gold(tmp_path, document)
    gold, sha = load_gold_set(path)
    data, raw = read_json(path, "gold set")
    whole = parse_gold_set(data, path)
    assert gold == whole and gold.provenance == whole.provenance and gold.anchors == whole.anchors
    assert sha == hashlib.sha256(raw).hexdigest()


def test_a_gold_set_with_problems_is_refused_with_every_problem_as_before(tmp_path):
    document = {"schema_version": 1, "questions": [
        {"id": "q1", "question": "a?", "gold": ["c1"]},
        {"id": "q1", "question": "b?", "gold": ["c2"]},
        {"id": "q3", "question": "c?", "gold": []}]}
    path = _gold(tmp_path, document)
    with pytest.raises(InputErrors) as streamed:
        load_gold_set(path)
    with pytest.raises(InputErrors) as whole:
        parse_gold_set(document, path)
    assert streamed.value.lines() == whole.value.lines()
    assert len(whole.value.problems) == 2
