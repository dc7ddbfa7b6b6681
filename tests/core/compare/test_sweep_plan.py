"""The rows of a sweep: grid parsing, the cartesian product, each row's config checked."""

from __future__ import annotations

import pytest

from ci_eval.core.compare.sweep_plan import MAX_ROWS, file_labels, grid_rows, parse_grid
from ci_eval.core.config import parse_config
from ci_eval.errors import InputError, InputErrors

BASE = {"gold_set": "gold.json", "k": 5,
        "retriever": {"type": "python", "target": "m:search", "params": {"stem": True}}}


def test_values_are_typed_as_toml_reads_them_and_keys_find_their_place():
    axes = parse_grid(["chunk_size=256,512", "fusion=none,rrf", "depth=20", "params.w=0.5,1",
                       "retriever.timeout=5", "k=3", "flag=true,false"])
    got = {a.key: (a.place, a.values) for a in axes}
    assert got["chunk_size"] == (("retriever", "params", "chunk_size"), (256, 512))
    assert got["fusion"] == (("retriever", "params", "fusion"), ("none", "rrf"))
    assert got["depth"] == (("retriever", "depth"), (20,))
    assert got["params.w"] == (("retriever", "params", "w"), (0.5, 1))
    assert got["retriever.timeout"] == (("retriever", "timeout"), (5,))
    assert got["k"] == (("k",), (3,))
    assert got["flag"][1] == (True, False)


def test_the_grid_is_the_cartesian_product_first_axis_slowest():
    config = parse_config(BASE, "c.toml")
    rows = grid_rows(config, parse_grid(["a=1,2", "b=x,y,z"]))
    expected = [(a, b) for a in (1, 2) for b in ("x", "y", "z")]
    assert [r.number for r in rows] == list(range(1, len(expected) + 1))
    assert [(r.config.retriever.params["a"], r.config.retriever.params["b"]) for r in rows] == expected
    assert rows[0].label == "a=1 b=x"
    assert all(r.config.retriever.params["stem"] is True for r in rows)  # the rest kept
    assert config.retriever.params == {"stem": True}  # the base config untouched


@pytest.mark.parametrize("item", ["noequals", "=1,2", "a=", "a=1,,2"])
def test_a_malformed_item_is_named(item):
    with pytest.raises(InputErrors) as caught:
        parse_grid([item, "also bad"])
    lines = caught.value.lines()
    assert len(lines) == 2 and all("--grid" in line for line in lines)
    assert repr(item) in lines[0]


def test_a_key_given_twice_and_a_grid_too_large_are_refused():
    with pytest.raises(InputErrors, match="given twice"):
        parse_grid(["a=1", "params.a=2"])
    side = int(MAX_ROWS ** 0.5) + 1
    values = ",".join(str(i) for i in range(side))
    with pytest.raises(InputError, match=f"{side * side:,} rows"):
        parse_grid([f"a={values}", f"b={values}"])


def test_a_bad_value_is_named_at_its_place_with_the_row():
    config = parse_config(BASE, "c.toml")
    with pytest.raises(InputErrors) as caught:
        grid_rows(config, parse_grid(["depth=20,many"]))
    (line,) = caught.value.lines()
    assert "c.toml (--grid depth=many)" in line and "retriever.depth" in line


def test_file_labels_are_names_unless_they_clash():
    assert file_labels(["a/bm25.toml", "b/rrf.toml"]) == ["bm25", "rrf"]
    assert file_labels(["a/ci-eval.toml", "b/ci-eval.toml"]) == ["a/ci-eval.toml", "b/ci-eval.toml"]
