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
from ci_eval.core.artefact.repeat import RepeatTally
from ci_eval.core.artefact.results import clean, clean_staged
from ci_eval.core.artefact.run_columns import RunColumns
from ci_eval.core.artefact.shard import shard_of
from ci_eval.core.artefact.stage_records import StageCollector
from ci_eval.core.gold.goldset import GoldSet, Question
from ci_eval.core.measure.stages import StageSpec, stage_chain

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


CHAIN = stage_chain([StageSpec("pool", 6), StageSpec("rerank", 4), StageSpec("packed", chars=40)], 2)


@settings(max_examples=150, deadline=None)
@given(questions=QUESTIONS, data=st.data(), depth=st.integers(1, 6))
def test_the_bound_holds_with_stages_and_a_repeat_record(questions, data, depth):
    """A run with a pool, a rerank and a packing stage, repeated: its ``stages`` and
    ``repeat`` keys, written as the pipeline writes them, stay within the bound too."""
    answers = data.draw(st.lists(st.tuples(ANSWER, ANSWER, ANSWER), min_size=len(questions), max_size=len(questions)))
    gold = GoldSet(1, None, tuple(questions))
    retrieved = [(q.id, clean_staged({"stages": {"pool": pool, "rerank": rerank}, "results": final}, depth, 1.0,
                                     frozenset(INDEX)))
                 for q, (pool, rerank, final) in zip(questions, answers)]
    relevant = {q.id: [g for g, _ in q.gold] for q in questions if not q.unanswerable}
    collector = StageCollector(CHAIN, 2, None, lambda: relevant, {cid: 7 * (1 + j % 5) for j, cid in enumerate(INDEX)})
    columns = RunColumns(METRICS, 0.5, 2, depth)
    tally = RepeatTally(2, depth)
    again = data.draw(st.lists(ANSWER, min_size=len(questions), max_size=len(questions)))

    def rows():
        for row in tally.first(evaluate_rows(gold, collector.passing(retrieved), k=2, metrics=METRICS,
                                             index_ids=frozenset(INDEX))):
            columns.add(row)
            yield row

    def end():
        later = [(q.id, clean(a, depth, 1.0, frozenset(INDEX))) for q, a in zip(questions, again)]
        for _ in range(2):
            tally.add_pass(evaluate_rows(gold, later, k=2, metrics=METRICS, index_ids=frozenset(INDEX)))
        return {"repeat": tally.record(), "summary": columns.summary(), "history": [],
                **collector.result().recorded()}

    head = _head(len(questions))
    head["config"] = {"k": 2, "stages": [spec.as_recorded() for spec in CHAIN]}
    written = sum(len(p.encode("utf-8")) for p in artefact_pieces(head, rows(), end))
    longest = max(map(len, INDEX + ["outside"]))
    assert written <= artefact_bound(head, questions, depth, longest, [], repeat=3, chain=CHAIN)


def test_a_deep_pool_of_many_gold_ids_is_counted_where_the_rows_alone_would_not_cover_it():
    """100 gold ids a question, found at ranks 1,901 to 2,000 of five 2,000-deep stages:
    the stage records take more than the rows' slack, so a bound of the rows alone would be
    passed; the bound with the stages holds."""
    gold_ids = [f"g{j}" for j in range(100)]
    filler = [f"f{j}" for j in range(1900)]
    index = frozenset(gold_ids + filler)
    questions = [Question(f"q{i}", "?", tuple((g, 1) for g in gold_ids), (), False) for i in range(10)]
    names = ("pool", "dense", "fused", "rerank", "second")
    chain = stage_chain([StageSpec(name, 2000) for name in names], 2)
    ranked = [(cid, 1.0) for cid in filler + gold_ids]
    retrieved = [(q.id, clean_staged({"stages": dict.fromkeys(names, ranked), "results": ranked[:3]}, 3, 1.0,
                                     index)) for q in questions]
    collector = StageCollector(chain, 2, None, lambda: {q.id: gold_ids for q in questions}, None)
    gold = GoldSet(1, None, tuple(questions))
    columns = RunColumns(METRICS, 0.5, 2, 3)

    def rows():
        for row in evaluate_rows(gold, collector.passing(retrieved), k=2, metrics=METRICS, index_ids=index):
            columns.add(row)
            yield row

    head = _head(len(questions))
    head["config"] = {"k": 2, "stages": [spec.as_recorded() for spec in chain]}
    written = sum(len(p.encode("utf-8")) for p in artefact_pieces(
        head, rows(), lambda: {"summary": columns.summary(), "history": [], **collector.result().recorded()}))
    rows_alone = artefact_bound(_head(len(questions)), questions, 3, 5, []) + len(compact(head["config"]))
    assert rows_alone < written <= artefact_bound(head, questions, 3, 5, [], chain=chain)
