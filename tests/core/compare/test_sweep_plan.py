"""The rows of a sweep: grid parsing, the cartesian product, each row's config checked."""

from __future__ import annotations

import pytest

from ci_eval.core.compare.sweep_plan import MAX_ROWS, file_labels, grid_rows, parse_grid
from ci_eval.core.config import parse_config
from ci_eval.errors import InputError, InputErrors

BASE = {"gold_set": "gold.json", "k": 5,
        "retriever": {"type": "python", "target": "m:search",
                      "params": {"stem": True, "fusion": "none", "flag": False, "a": 0, "b": "x"}},
        "index": {"callable": "m:chunks", "params": {"chunk_size": 512}}}
CONFIG = parse_config(BASE, "c.toml")


def test_values_are_typed_as_toml_reads_them_and_keys_find_their_place():
    axes = parse_grid(["chunk_size=256,512", "fusion=none,rrf", "depth=20", "params.w=0.5,1",
                       "retriever.timeout=5", "k=3", "flag=true,false", "index.manifest=a.json",
                       "index.params.overlap=0,50", "path=r1"], CONFIG)
    got = {a.key: (a.place, a.values) for a in axes}
    assert got["chunk_size"] == (("index", "params", "chunk_size"), (256, 512))
    assert got["index.params.overlap"] == (("index", "params", "overlap"), (0, 50))
    assert got["index.manifest"] == (("index", "manifest"), ("a.json",))
    assert got["path"] == (("retriever", "path"), ("r1",))
    assert got["fusion"] == (("retriever", "params", "fusion"), ("none", "rrf"))
    assert got["depth"] == (("retriever", "depth"), (20,))
    assert got["params.w"] == (("retriever", "params", "w"), (0.5, 1))
    assert got["retriever.timeout"] == (("retriever", "timeout"), (5,))
    assert got["k"] == (("k",), (3,))
    assert got["flag"][1] == (True, False)


def test_a_key_no_config_can_vary_is_refused_with_the_list():
    with pytest.raises(InputErrors) as caught:
        parse_grid(["chunk_sise=256,512", "retriever.chunking=a", "index.chunking=a"], CONFIG)
    lines = caught.value.lines()
    assert len(lines) == 3 and all(line.startswith("--grid: ") for line in lines)
    assert "'chunk_sise' is not something c.toml can vary (did you mean 'chunk_size'?)" in lines[0]
    assert "[index] params (chunk_size)" in lines[0] and "index.params.NAME or params.NAME" in lines[0]


def test_an_index_param_cuts_the_index_and_reaches_the_retriever():
    rows = grid_rows(CONFIG, parse_grid(["chunk_size=256,1024"], CONFIG))
    assert [r.config.index_params for r in rows] == [{"chunk_size": 256}, {"chunk_size": 1024}]
    assert [r.config.retriever.params["chunk_size"] for r in rows] == [256, 1024]
    assert rows[1].config.as_recorded()["index"]["params"] == {"chunk_size": 1024}


def test_the_grid_is_the_cartesian_product_first_axis_slowest():
    config = CONFIG
    rows = grid_rows(config, parse_grid(["a=1,2", "b=x,y,z"], config))
    expected = [(a, b) for a in (1, 2) for b in ("x", "y", "z")]
    assert [r.number for r in rows] == list(range(1, len(expected) + 1))
    assert [(r.config.retriever.params["a"], r.config.retriever.params["b"]) for r in rows] == expected
    assert rows[0].label == "a=1 b=x"
    assert all(r.config.retriever.params["stem"] is True for r in rows)  # the rest kept
    assert config.retriever.params["a"] == 0  # the base config untouched


@pytest.mark.parametrize("item", ["noequals", "=1,2", "a=", "a=1,,2"])
def test_a_malformed_item_is_named(item):
    with pytest.raises(InputErrors) as caught:
        parse_grid([item, "also bad"], CONFIG)
    lines = caught.value.lines()
    assert len(lines) == 2 and all("--grid" in line for line in lines)
    assert repr(item) in lines[0]


def test_a_key_given_twice_and_a_grid_too_large_are_refused():
    with pytest.raises(InputErrors, match="given twice"):
        parse_grid(["a=1", "params.a=2"], CONFIG)
    side = int(MAX_ROWS ** 0.5) + 1
    values = ",".join(str(i) for i in range(side))
    with pytest.raises(InputError, match=f"{side * side:,} rows"):
        parse_grid([f"a={values}", f"b={values}"], CONFIG)


def test_a_bad_value_is_named_at_its_place_with_the_row():
    config = CONFIG
    with pytest.raises(InputErrors) as caught:
        grid_rows(config, parse_grid(["depth=20,many"], config))
    (line,) = caught.value.lines()
    assert "c.toml (--grid depth=many)" in line and "retriever.depth" in line


def test_file_labels_are_names_unless_they_clash():
    assert file_labels(["a/bm25.toml", "b/rrf.toml"]) == ["bm25", "rrf"]
    assert file_labels(["a/ci-eval.toml", "b/ci-eval.toml"]) == ["a/ci-eval.toml", "b/ci-eval.toml"]
