"""What a run's artefact size is known to be: the gold set's part exactly, never more than
what is written, and the rest projected from the first rows with a depth that fits."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.artefact.artefact import artefact_head
from ci_eval.core.artefact.artefact_size import (
    PROBE_LEAST,
    PROBE_SHARE,
    SizeProbe,
    head_bytes,
    known_bytes,
    probe_rows,
)
from ci_eval.core.artefact.artefact_writer import artefact_pieces, compact
from ci_eval.core.artefact.evaluation import evaluate_rows
from ci_eval.core.artefact.results import clean
from ci_eval.core.artefact.run_columns import RunColumns
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
def test_the_gold_sets_part_is_never_more_than_what_is_written(questions, data, depth):
    answers = data.draw(st.lists(st.tuples(ANSWER, st.floats(0, 1e9)), min_size=len(questions),
                                 max_size=len(questions)))
    # The least the artefact can be (what the refusal before retrieval reads): the head and
    # the gold set's fields of every row; the retriever's part of a row is never negative.
    assert head_bytes(_head(len(questions))) + known_bytes(questions) <= _written(questions, answers, depth)


def test_the_gold_set_fields_are_counted_exactly_across_batches():
    questions = [Question(f"q{i}", f'a "quoted" question\n{i} é', (("c1", 2), ("c\u20ac", 1)), ("t",), False)
                 for i in range(5000)]  # more than one batch
    exact = sum(len(compact([q.id, q.question, q.tags, q.gold, q.gold]).encode()) - 6 for q in questions)
    assert known_bytes(questions) == exact


def test_a_projection_waits_for_a_share_of_the_rows_and_none_is_made_for_a_small_run():
    assert probe_rows(PROBE_LEAST) is None
    assert probe_rows(PROBE_LEAST + 1) == PROBE_LEAST
    assert probe_rows(1000 * PROBE_SHARE) == 1000


def test_rows_of_one_size_are_projected_to_the_byte():
    # head 100 bytes, then 10 rows of 50 bytes, 20 of each the gold set's: 1,000 rows whose
    # gold-set fields take 25,000 bytes take 100 + 25,000 + 1,000 x 30
    probe = SizeProbe(rows=10, written=100 + 10 * 50, head=100, known=10 * 20, rankings=())
    assert probe.projected(1000, 25_000) == 100 + 25_000 + 1000 * 30
    assert probe.projected(10, 10 * 20) == probe.written
    assert probe.projected(1000, 25_000, head=40) == 40 + 25_000 + 1000 * 30


def test_the_depth_advised_takes_off_the_entries_past_it_on_every_row():
    entry = ["c-1", 0.5]
    size = len(compact(entry)) + 1  # an entry and the comma before it
    rankings = ((entry,) * 4, (entry,) * 2)  # two rows: four entries and two
    probe = SizeProbe(rows=2, written=1000, head=0, known=0, rankings=rankings)
    whole = probe.projected(200, 0)  # 100,000
    # at depth d the first row loses 4 - d entries and the second max(0, 2 - d), 100 times over
    at = {d: whole - 100 * size * (max(0, 4 - d) + max(0, 2 - d)) for d in range(1, 4)}
    for d in (3, 2, 1):
        limit = at[d] / 0.95  # the margin the advice keeps
        assert probe.depth_that_fits(200, 0, 4, 1, limit) == d
    assert probe.depth_that_fits(200, 0, 4, 2, at[1] / 0.95) is None
