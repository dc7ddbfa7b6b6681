"""The demo's hand-labelled gold set and its two configs."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from ci_eval.demo.corpus import index_version, load_chunks
from ci_eval.demo.retriever import search

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

DEMO = resources.files("ci_eval.demo")


def _gold() -> dict:
    return json.loads(DEMO.joinpath("gold.json").read_text("utf-8"))


def _config(name: str) -> dict:
    return tomllib.loads(DEMO.joinpath(name).read_text("utf-8"))


def _gold_ids(question: dict) -> list[str]:
    gold = question["gold"]
    return list(gold) if isinstance(gold, (list, dict)) else []


def test_shape_and_size():
    doc = _gold()
    assert doc["schema_version"] == 1
    assert doc["index_version"].startswith("pydoc-topics-3.11-")
    assert {"built_by", "built_at", "method"} <= set(doc["provenance"])
    questions = doc["questions"]
    assert len(questions) >= 40
    ids = [q["id"] for q in questions]
    assert len(set(ids)) == len(ids)
    assert all(q["question"].strip() and q["tags"] for q in questions)


def test_unanswerable_questions_have_no_gold_and_answerable_ones_do():
    questions = _gold()["questions"]
    unanswerable = [q for q in questions if q.get("unanswerable")]
    assert len(unanswerable) >= 4
    assert all(q["gold"] in ([], {}) for q in unanswerable)
    assert all(_gold_ids(q) for q in questions if not q.get("unanswerable"))


def test_some_multi_gold_and_some_graded():
    questions = _gold()["questions"]
    assert sum(len(_gold_ids(q)) > 1 for q in questions) >= 10
    graded = [q["gold"] for q in questions if isinstance(q["gold"], dict) and q["gold"]]
    assert len(graded) >= 5
    for gold in graded:
        assert set(gold.values()) <= {1, 2}
        assert 2 in gold.values()  # each graded question names its best chunk


def test_every_gold_id_exists_in_the_corpus_it_was_built_against():
    doc = _gold()
    if index_version() != doc["index_version"]:
        pytest.skip(
            f"gold set labelled on {doc['index_version']}, this Python's topics are "
            f"{index_version()}: ids may legitimately differ (the demo reports them as stale)"
        )
    ids = {c.id for c in load_chunks()}
    missing = sorted({g for q in doc["questions"] for g in _gold_ids(q)} - ids)
    assert missing == []


@pytest.mark.parametrize("name", ["base.toml", "head.toml"])
def test_configs_point_at_the_demo_parts(name):
    config = _config(name)
    assert config["gold_set"] == "gold.json"
    assert config["k"] == 5
    assert config["retriever"]["type"] == "python"
    assert config["retriever"]["target"] == "ci_eval.demo.retriever:search"
    # The head's pull request re-ingests part of the corpus (ci_eval/demo/reingest.py).
    manifest = {"base.toml": "manifest", "head.toml": "reingested_manifest"}[name]
    assert config["index"]["callable"] == f"ci_eval.demo.retriever:{manifest}"
    assert set(config["gate"]) >= {"min", "max_drop"}
    # The params are ones the retriever accepts; with a reranker the answer has its stages,
    # named as the config's [[stages]] name them.
    answer = search("What does the nonlocal statement do?", 5, **config["retriever"]["params"])
    assert len(answer["results"]) == 5
    assert set(answer["stages"]) == {s["name"] for s in config["stages"]} == {"pool", "rerank"}


def test_head_differs_from_base_only_in_retriever_params_and_its_index():
    base, head = _config("base.toml"), _config("head.toml")
    base_params = base["retriever"].pop("params")
    head_params = head["retriever"].pop("params")
    # The re-ingested index: its manifest, and the retriever searching it.
    assert (base.pop("index"), head.pop("index")) == ({"callable": "ci_eval.demo.retriever:manifest"},
                                                      {"callable": "ci_eval.demo.retriever:reingested_manifest"})
    assert head_params.pop("corpus") == "reingested" and "corpus" not in base_params
    assert base == head
    assert base_params != head_params
