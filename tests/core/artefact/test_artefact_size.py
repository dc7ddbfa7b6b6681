"""The size bound a run is refused on holds for whatever a retriever answers within its
assumptions (ids of the index, no failures), and is exact where the gold set decides."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.artefact.artefact import artefact_head
from ci_eval.core.artefact.artefact_size import (
    _each_known,
    artefact_bound,
    depth_that_fits,
    known_bytes,
    shards_that_fit,
)
from ci_eval.core.artefact.artefact_writer import artefact_pieces, compact
from ci_eval.core.artefact.evaluation import evaluate_rows
from ci_eval.core.artefact.results import clean
from ci_eval.core.artefact.run_columns import RunColumns
from ci_eval.core.artefact.shard import shard_of
from ci_eval.core.gold.goldset import GoldSet, Question

METRICS = ("hit@2", "recall@4", "ndcg@4", "mrr", "map")
TEXT = st.text(min_size=1, max_size=12)
INDEX = [f"chunk/{'é' * (j % 4)}{j}" for j in range(12)]


def _head(n: int, history=None) -> dict:
    return artefact_head(tool_version="0.1.0", created_at="2026-01-01T00:00:00Z", git=None,
                         config={"k": 2}, gold_set={"path": "gold.json", "questions": n}, index={"ids": len(INDEX)},
                         k=2, metrics=METRICS, abstain_below=0.5)


QUESTIONS = st.lists(st.builds(
    lambda qid, text, gold, tags, unanswerable: Question(qid, text, () if unanswerable else gold, tags, unanswerable),
    TEXT, TEXT, st.lists(st.tuples(st.sampled_from(INDEX), st.integers(1, 3)), min_size=1, max_size=3,
                         unique_by=lambda p: p[0]).map(tuple),
    st.lists(TEXT, max_size=2).map(tuple), st.booleans()), min_size=1, max_size=12, unique_by=lambda q: q.id)
ANSWER = st.lists(st.tuples(st.sampled_from(INDEX + ["outside"]), st.floats(allow_nan=False, allow_infinity=False)),
                  max_size=8)


def _written(questions, answers, depth) -> int:
    gold = GoldSet(1, None, tuple(questions))
    retrieved = [(q.id, clean(a, depth, latency, frozenset(INDEX))) for q, (a, latency) in zip(questions, answers)]
    columns = RunColumns(METRICS, 0.5, 2, depth)

    def rows():
        for row in evaluate_rows(gold, retrieved, k=2, metrics=METRICS, index_ids=frozenset(INDEX)):
            columns.add(row)
            yield row

    pieces = artefact_pieces(_head(len(questions)), rows(), lambda: {"summary": columns.summary(), "history": []})
    return sum(len(p.encode("utf-8")) for p in pieces)


@settings(max_examples=200, deadline=None)
@given(questions=QUESTIONS, data=st.data(), depth=st.integers(1, 6))
def test_no_artefact_of_ids_the_run_knows_is_larger_than_its_bound(questions, data, depth):
    answers = data.draw(st.lists(st.tuples(ANSWER, st.floats(0, 1e9)), min_size=len(questions),
                                 max_size=len(questions)))
    longest = max(map(len, INDEX + ["outside"]))
    assert _written(questions, answers, depth) <= artefact_bound(_head(len(questions)), questions, depth,
                                                                 longest, [])


def test_the_gold_set_fields_are_counted_exactly_in_batches_and_one_by_one():
    questions = [Question(f"q{i}", f'a "quoted" question\n{i} é', (("c1", 2), ("c\u20ac", 1)), ("t",), False)
                 for i in range(5000)]  # more than one batch
    exact = sum(len(compact([q.id, q.question, q.tags, q.gold, q.gold]).encode()) - 6 for q in questions)
    assert known_bytes(questions) == exact == sum(_each_known(questions))


def test_the_shard_count_named_makes_every_part_fit():
    questions = [Question(f"q{i}", f"question {i}", (("chunk/1", 1),), ("t",), False) for i in range(300)]
    head = _head(len(questions))
    whole = artefact_bound(head, questions, 6, 12, [])
    limit = whole // 3
    count = shards_that_fit(head, questions, 6, 12, [], limit)
    assert count is not None and count >= 3
    for i in range(1, count + 1):
        part = [q for q in questions if shard_of(q.id, count) == i]
        assert artefact_bound(head, part, 6, 12, []) + len(compact([q.id for q in part])) < limit


def test_the_depth_named_is_the_largest_whose_bound_fits():
    questions = [Question(f"q{i}", f"question {i}", (("chunk/1", 1),), ("t",), False) for i in range(300)]
    head = _head(len(questions))
    bounds = {d: artefact_bound(head, questions, d, 12, []) for d in range(6, 21)}
    limit = (bounds[11] + bounds[12]) // 2
    assert depth_that_fits(head, questions, 20, 12, [], limit, least=6) == 11
    assert depth_that_fits(head, questions, 20, 12, [], bounds[6] - 1, least=6) is None
    assert depth_that_fits(head, questions, 20, 12, [], bounds[20], least=6) == 20
