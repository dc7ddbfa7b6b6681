"""The framework retriever types, id_from and score in the config (core/config.py)."""

import pytest

from ci_eval.core.config import parse_config
from ci_eval.errors import InputErrors


def config(**retriever):
    return {"gold_set": "gold.json", "k": 2, "retriever": retriever}


@pytest.mark.parametrize("kind, default_id", [("langchain", "id"), ("llamaindex", "node_id"), ("haystack", "id")])
def test_framework_types_default_their_id_source_and_record_it(kind, default_id):
    c = parse_config(config(type=kind, target="app.rag:retriever"), "c.toml")
    assert (c.retriever.id_from, c.retriever.score) == (default_id, "similarity")
    assert c.as_recorded()["retriever"] == {"type": kind, "depth": 6, "params": {}, "target": "app.rag:retriever",
                                            "id_from": default_id, "score": "similarity"}


def test_python_records_id_from_and_score_only_when_set():
    plain = parse_config(config(type="python", target="m:f"), "c.toml").as_recorded()["retriever"]
    assert "id_from" not in plain and "score" not in plain
    dist = parse_config(config(type="python", target="m:f", score="distance"), "c.toml").as_recorded()["retriever"]
    assert (dist["id_from"], dist["score"]) == (None, "distance")


def test_bad_values_and_misplaced_keys_are_named():
    with pytest.raises(InputErrors) as caught:
        parse_config(config(type="langchain", id_from="metadata", score="cosine"), "c.toml")
    lines = caught.value.lines()
    assert any(line.startswith("c.toml:retriever.id_from:") for line in lines)
    assert any(line.startswith("c.toml:retriever.score:") for line in lines)
    assert 'c.toml:retriever: retriever type "langchain" needs "target"' in lines
    with pytest.raises(InputErrors) as caught:
        parse_config(config(type="command", command=["x"], id_from="id"), "c.toml")
    assert caught.value.lines() == [
        'c.toml:retriever.id_from: "id_from" applies to retriever types python, langchain, llamaindex, haystack '
        'and to run-file with format "openinference"']
