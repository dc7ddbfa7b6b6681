"""BM25 scores against the formula worked by hand on a three-document corpus."""

from __future__ import annotations

import math

import pytest

from ci_eval.demo.bm25 import BM25Index, BM25Params, stem, tokenize

# Lengths 3, 2, 4 tokens: avgdl = 3. "banana" and "cherry" are in two documents, "apple"
# and "date" in one.
DOCS = [
    ("d1", "", "apple banana apple"),
    ("d2", "", "banana cherry"),
    ("d3", "", "cherry cherry cherry date"),
]


def idf(df: int, n: int = 3) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def scores(index: BM25Index, question: str) -> dict[str, float]:
    return dict(index.search(question, 10))


def test_single_term_default_params():
    index = BM25Index(DOCS)
    # d1: tf 2, dl 3 = avgdl, so the length factor is 1 - b + b = 1 and the denominator
    # is tf + k1 = 2 + 1.2.
    expected = idf(1) * 2 * (1.2 + 1) / (2 + 1.2)
    assert scores(index, "apple") == {"d1": pytest.approx(expected, rel=1e-12)}


def test_two_terms_and_length_normalisation():
    index = BM25Index(DOCS)
    got = scores(index, "banana cherry")
    # d2: dl 2, K = 1.2 * (0.25 + 0.75 * 2/3) = 0.9; tf 1 for both terms, df 2 for both.
    d2 = 2 * idf(2) * 1 * 2.2 / (1 + 0.9)
    # d1: banana tf 1, dl 3, K = 1.2.
    d1 = idf(2) * 1 * 2.2 / (1 + 1.2)
    # d3: cherry tf 3, dl 4, K = 1.2 * (0.25 + 0.75 * 4/3) = 1.5.
    d3 = idf(2) * 3 * 2.2 / (3 + 1.5)
    assert got == {
        "d1": pytest.approx(d1, rel=1e-12),
        "d2": pytest.approx(d2, rel=1e-12),
        "d3": pytest.approx(d3, rel=1e-12),
    }
    assert [doc for doc, _ in index.search("banana cherry", 3)] == ["d2", "d3", "d1"]


def test_b_zero_ignores_length_and_k1_zero_ignores_tf():
    no_length = BM25Index(DOCS, BM25Params(b=0.0))
    # K = k1 for every document: d3's cherry (tf 3) no longer pays for d3's length.
    assert scores(no_length, "cherry")["d3"] == pytest.approx(idf(2) * 3 * 2.2 / (3 + 1.2))
    binary = BM25Index(DOCS, BM25Params(k1=0.0))
    # With k1 = 0 each matching term contributes exactly its idf.
    assert scores(binary, "cherry") == {"d2": pytest.approx(idf(2)), "d3": pytest.approx(idf(2))}


def test_title_boost_adds_weighted_title_tokens():
    docs = [("d1", "apple", "banana"), ("d2", "", "banana cherry"), ("d3", "", "cherry date")]
    boosted = BM25Index(docs, BM25Params(title_boost=2.0))
    # d1 now reads as tf(apple) = 2 and dl = 1 + 2 = 3; avgdl = (3 + 2 + 2) / 3.
    avgdl = 7 / 3
    k = 1.2 * (0.25 + 0.75 * 3 / avgdl)
    assert scores(boosted, "apple") == {"d1": pytest.approx(idf(1) * 2 * 2.2 / (2 + k))}
    assert scores(BM25Index(docs), "apple") == {}  # title_boost 0: titles are not indexed


def test_idf_never_negative():
    docs = [("a", "", "x"), ("b", "", "x"), ("c", "", "x y")]
    index = BM25Index(docs)
    # df 3 of 3: the +1 inside the log keeps the weight positive (ln(1 + 0.5/3.5)).
    assert index.idf["x"] == pytest.approx(math.log(1 + 0.5 / 3.5))
    assert index.idf["x"] > 0


def test_ties_break_by_id_descending_and_k_truncates():
    docs = [("a", "", "same words"), ("c", "", "same words"), ("b", "", "same words")]
    index = BM25Index(docs)
    assert [doc for doc, _ in index.search("same", 3)] == ["c", "b", "a"]
    assert [doc for doc, _ in index.search("same", 2)] == ["c", "b"]
    assert index.search("same", 0) == []


def test_no_match_returns_nothing():
    assert BM25Index(DOCS).search("zebra", 5) == []


def test_query_term_order_and_repetition_do_not_change_scores():
    index = BM25Index(DOCS)
    assert index.search("banana cherry", 3) == index.search("cherry banana banana", 3)


def test_tokenizer():
    assert tokenize("Hello, World! __slots__ x2") == ["hello", "world", "slots", "x2"]
    # Python keywords survive the stopword list; function words do not.
    assert tokenize("What is the not in operator", stopwords=True) == [
        "is",
        "not",
        "in",
        "operator",
    ]
    assert tokenize("evaluated arguments", stemming=True) == ["evaluat", "argument"]


def test_stemmer_folds_inflections_only():
    assert stem("arguments") == stem("argument") == "argument"
    assert stem("classes") == stem("class") == "class"
    assert stem("properties") == "property"
    assert stem("status") == "status"  # "-us" is not a plural
    assert stem("is") == "is"  # too short to touch
    assert stem("2024") == "2024"


def test_stemming_joins_forms_in_retrieval():
    docs = [("d1", "", "the arguments are evaluated"), ("d2", "", "something else")]
    assert BM25Index(docs).search("argument", 5) == []
    assert [d for d, _ in BM25Index(docs, BM25Params(stem=True)).search("argument", 5)] == ["d1"]


@pytest.mark.parametrize(
    "bad", [{"k1": -1.0}, {"k1": math.inf}, {"b": 1.5}, {"b": -0.1}, {"title_boost": -2.0}]
)
def test_invalid_params(bad):
    with pytest.raises(ValueError):
        BM25Params(**bad)


def test_duplicate_ids_rejected():
    with pytest.raises(ValueError):
        BM25Index([("a", "", "x"), ("a", "", "y")])
