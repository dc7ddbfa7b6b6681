"""Ids and scores out of framework-shaped results (retrieval/extract.py), on plain objects."""

from dataclasses import dataclass, field

import pytest

from ci_eval.core.artefact.results import ResultError
from ci_eval.retrieval.extract import adapt_callable, ranked, result_id


@dataclass
class Doc:  # LangChain's Document shape
    id: str | None = None
    metadata: dict = field(default_factory=dict)


@dataclass
class Node:  # LlamaIndex's TextNode shape
    node_id: str
    ref_doc_id: str | None
    metadata: dict


@dataclass
class NodeWithScore:
    node: Node
    score: float | None


@dataclass
class HaystackDoc:
    id: str
    meta: dict
    score: float | None = None


def test_each_id_source():
    node = NodeWithScore(Node("n-1", "doc-1", {"chunk": "c-1"}), 0.5)
    assert result_id(node, "node_id", 1) == "n-1"
    assert result_id(node, "ref_doc_id", 1) == "doc-1"
    assert result_id(node, "metadata.chunk", 1) == "c-1"
    assert result_id(Doc("d", {"k": 7}), "metadata.k", 1) == "7"
    assert result_id(HaystackDoc("h", {"file": "a.md"}), "metadata.file", 1) == "a.md"
    assert result_id({"id": "x", "metadata": {}}, "id", 1) == "x"


@pytest.mark.parametrize("obj, id_from, message", [
    (Doc(None, {"source": "a", "chunk": "1"}), "id",
     "result 2 has no 'id'; its metadata has chunk, source: set retriever.id_from"),
    (Doc("", {}), "id", "result 2 has no 'id': set retriever.id_from"),
    (Doc("x", {"source": "a"}), "metadata.chunk", "result 2 has no metadata 'chunk' (its metadata keys: source)"),
    (NodeWithScore(Node("n", None, {}), 1.0), "ref_doc_id", "result 2 has no 'ref_doc_id'"),
    (Doc("x", {"chunk": ["a"]}), "metadata.chunk", "result 2 has an id of type list at 'metadata.chunk'"),
])
def test_a_missing_or_unusable_id_is_an_error_never_a_miss(obj, id_from, message):
    with pytest.raises(ResultError) as caught:
        result_id(obj, id_from, 2)
    assert str(caught.value).startswith(message)


def test_distances_are_negated_and_similarities_kept():
    items = [(Doc("a"), 0.1), (Doc("b"), 0.4)]
    assert ranked(items, "id", "distance") == [("a", -0.1), ("b", -0.4)]
    assert ranked(items, "id", "similarity") == [("a", 0.1), ("b", 0.4)]


def test_no_scores_at_all_become_rank_scores_in_the_framework_order():
    items = [(Doc("c"), None), (Doc("a"), None), (Doc("b"), None)]
    assert ranked(items, "id", "similarity") == [("c", 3.0), ("a", 2.0), ("b", 1.0)]
    # The sign of a rank is no distance: "distance" changes nothing here.
    assert ranked(items, "id", "distance") == [("c", 3.0), ("a", 2.0), ("b", 1.0)]


def test_some_scores_missing_is_an_error():
    with pytest.raises(ResultError, match="result 2 has no score while others have one"):
        ranked([(Doc("a"), 1.0), (Doc("b"), None)], "id", "similarity")


def test_python_callable_results_adapted():
    docs = lambda q, k: [(Doc(None, {"chunk": "far"}), 0.9), HaystackDoc("h", {"chunk": "near"}, 0.1)]
    fn = adapt_callable(docs, "metadata.chunk", "distance", batch=False)
    assert list(fn("q", 2)) == [("far", -0.9), ("near", -0.1)]
    pairs = adapt_callable(lambda q, k: [("a", 0.3), {"id": "b", "score": 0.2}], None, "distance", batch=False)
    assert list(pairs("q", 2)) == [("a", -0.3), {"id": "b", "score": -0.2}]
    untouched = lambda q, k: [("a", 1.0)]
    assert adapt_callable(untouched, None, "similarity", batch=False) is untouched


def test_batch_adapted_per_question_so_a_missing_id_fails_only_its_question():
    fn = adapt_callable(lambda qs, k: [[Doc("a")], [Doc(None)]], "id", "similarity", batch=True)
    first, second = fn(["q1", "q2"], 3)
    assert list(first) == [("a", 1.0)]
    with pytest.raises(ResultError, match="result 1 has no 'id'"):
        list(second)
