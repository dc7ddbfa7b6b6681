"""The indented JSON writer gives json.dumps's very bytes, on any value json can write."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.report.indented_json import dumps_indented
from ci_eval.core.report.render_json import _clean

_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats()
            | st.text(max_size=6) | st.sampled_from(["é", "\u2028", '"\\', "\x00", "\ud800"]))
_KEYS = st.text(max_size=4) | st.integers(-3, 3) | st.none() | st.booleans() | st.floats(0, 2)
_VALUES = st.recursive(_SCALARS, lambda inner: (
    st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    | st.dictionaries(_KEYS, inner, max_size=3)), max_leaves=30)


def _json(value, indent):
    return json.dumps(value, sort_keys=True, indent=indent, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES, indent=st.sampled_from([0, 1, 2, 4]))
def test_the_same_text_as_json_dumps(value, indent):
    try:
        want = _json(value, indent)
    except TypeError:  # keys json cannot sort against each other: the same error here
        try:
            dumps_indented(value, indent)
        except TypeError:
            return
        raise AssertionError("json refused this value, the writer did not") from None
    assert dumps_indented(value, indent) == want


@settings(max_examples=300, deadline=None)
@given(value=_VALUES)
def test_cleaned_as_the_report_cleans_it(value):
    try:
        want = _json(_clean(value), 2)
    except TypeError:
        return
    assert dumps_indented(value, 2, clean=_clean) == want


def _refused_alike(value, error: type, words: str) -> None:
    for write in (lambda v: _json(v, 2), lambda v: dumps_indented(v, 2)):
        try:
            write(value)
        except error as e:
            assert words in str(e)
        else:
            raise AssertionError(f"{value!r} was written")


def test_a_value_of_another_type_is_refused_as_json_refuses_it():
    for value in ({"a": {1, 2}}, [object()]):
        _refused_alike(value, TypeError, "not JSON serializable")


def test_a_circular_value_is_refused_as_json_refuses_it():
    loop: list = []
    loop.append(loop)
    _refused_alike(loop, ValueError, "Circular reference")
