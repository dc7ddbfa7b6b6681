"""Base and head read for ``compare``: the base first, then the head sharing its id
strings; the same artefacts and the same errors as reading each file alone."""

from __future__ import annotations

import os

import pytest
from factories import ranked_with_gold_at as at
from factories import spec
from v2_files import assert_same_columns, out_of_range, write_v2

from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs.artefact_file import read_run
from ci_eval.inputs.paired_read import read_pair

BASE = [spec("q1", {"a": 2, "b": 1}, ["b", "x", "a"], tags=["faq"]), spec("q2", ["g"], at(3)),
        spec("q3", ["g"], error="timeout after 30 s"), spec("u1", unanswerable=True, ranking=["z"]),
        spec("s1", ["g", "h"], at(2, "h"), stale=["g"]), spec("q4", ["g"], at(1), tags=["how-to"])]
HEAD = [spec("q1", {"a": 2, "b": 1}, ["a", "b"], tags=["faq"]), spec("q2", ["g"], at(None)),
        spec("q5", ["g"], at(2)), spec("u1", unanswerable=True, ranking=[]),
        spec("s1", ["g", "h"], at(1, "h"), stale=["g"]), spec("q4", ["g"], at(4), tags=["how-to"])]


@pytest.fixture
def pair(tmp_path):
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    write_v2(base, BASE)
    write_v2(head, HEAD)
    return str(base), str(head)


def serial(base: str, head: str):
    b = read_run(base)
    h = read_run(head, shared=b)
    if b.depth < h.header.k:
        b = read_run(base, top=h.header.k, shared=h)
    return b, h


def test_the_pair_holds_what_each_file_read_alone_holds(pair):
    base, head = read_pair(*pair)
    want_base, want_head = serial(*pair)
    assert_same_columns(base, want_base)
    assert_same_columns(head, want_head)
    assert all(x is y for x, y in zip(head.columns.ids[:2], base.columns.ids[:2]))  # q1, q2 shared
    assert base.columns.strings == {} and head.columns.strings == {}  # done reading


def test_a_base_kept_shallower_than_the_heads_k_is_read_again_deep_enough(tmp_path):
    base, head = tmp_path / "base.json", tmp_path / "head.json"
    write_v2(base, BASE, k=2)
    write_v2(head, HEAD, k=5)
    b, h = read_pair(str(base), str(head))
    assert b.depth == 5 == h.header.k
    assert_same_columns(b, read_run(base, top=5))
    assert b.columns.top(0) == ("b", "x", "a")  # q1's whole ranking, three of five places


def test_no_base_reads_the_head_alone(pair):
    base, head = read_pair(None, pair[1])
    assert base is None
    assert_same_columns(head, read_run(pair[1]))


def _bad(path) -> None:
    """Metric values out of range in three rows (q1, q2, q4): several problems in one file."""
    assert out_of_range(path) == 3, "the mutation did not apply"


def _error(path) -> InputError:
    with pytest.raises(InputError) as caught:
        read_run(path)
    return caught.value


@pytest.mark.parametrize("which", ["base", "head", "both"])
def test_a_bad_file_raises_its_own_error_the_bases_when_both_are_bad(pair, which):
    base, head = pair
    for path in {"base": [base], "head": [head], "both": [base, head]}[which]:
        _bad(path)
    want = _error(base if which != "head" else head)
    assert isinstance(want, InputErrors) and len(want.problems) == 3
    with pytest.raises(InputError) as caught:
        read_pair(base, head)
    got = caught.value
    assert type(got) is type(want) and str(got) == str(want) and got.lines() == want.lines()
    assert (got.source, got.place, got.message) == (want.source, want.place, want.message)


@pytest.mark.parametrize("kind", ["a FIFO", "missing"])
def test_a_path_not_a_regular_file_is_read_alones_error(pair, tmp_path, kind):
    other = str(tmp_path / "other")
    if kind == "a FIFO":
        os.mkfifo(other)
    with pytest.raises(InputError) as caught:
        read_pair(other, pair[1])
    assert str(caught.value) == str(_error(other))
