"""One artefact's questions as columns: each record made on demand holds what the row says,
for version 1 and version 2 alike, and the sequence and id views behave as the tuple and
dict they stand in for."""

from __future__ import annotations

import json

import pytest
from factories import artefact, as_v2, spec
from factories import ranked_with_gold_at as at

from ci_eval.core.artefact.artefact import GoldRank, read_artefact
from ci_eval.core.artefact.question_columns import ById, Questions, same_label, sorted_by_id
from ci_eval.core.artefact.question_row import FIELD

SPECS = [
    spec("q3", {"a": 2, "b": 1, "c": 0}, ["b", "x", "a"], tags=["how-to", "billing"],
         text="où est la facture 𝄞", answer_correct=True),
    spec("q1", ["g"], at(None), stale=["g"], warnings=["1 duplicate id(s) dropped"]),
    spec("q2", ["g"], error="timeout after 30 s", answer_correct=False),
    spec("u1", unanswerable=True, ranking=["x", "y"]),
]


def _both():
    v1 = artefact(SPECS)
    return {"version 1": v1, "version 2": json.loads(json.dumps(as_v2(v1)))}


@pytest.mark.parametrize("version", ["version 1", "version 2"])
def test_each_record_holds_what_its_row_says(version):
    data = _both()[version]
    a = read_artefact(data)
    rows = as_v2(data)["questions"] if version == "version 1" else data["questions"]
    assert len(a.questions) == len(rows) == 4
    for q, row in zip(a.questions, rows):
        assert (q.id, q.question, q.tags) == (row[FIELD["id"]], row[FIELD["question"]],
                                              tuple(row[FIELD["tags"]]))
        assert q.status == row[FIELD["status"]] and q.unanswerable == row[FIELD["unanswerable"]]
        assert q.gold == tuple(sorted((cid, float(g)) for cid, g in row[FIELD["gold"]]))
        assert q.stale == tuple(sorted(row[FIELD["stale"]]))
        assert q.first_gold_rank == row[FIELD["first_gold_rank"]]
        assert q.top_score == row[FIELD["top_score"]]
        assert q.answer_correct == row[FIELD["answer_correct"]]
        assert q.error == row[FIELD["error"]] and q.warnings == tuple(row[FIELD["warnings"]])
        ids = [cid for cid, _ in row[FIELD["ranking"]]]
        assert q.returned == len(ids) and q.top == tuple(ids[:5])
        # the relevant, live gold with the first place it came back (None: not returned)
        assert q.gold_ranks == tuple(
            GoldRank(cid, grade, ids.index(cid) + 1 if cid in ids else None)
            for cid, grade in q.gold if grade >= 1 and cid not in q.stale)


def test_the_text_comes_back_whatever_its_characters():
    a = read_artefact(_both()["version 2"])
    assert a.questions[0].question == "où est la facture 𝄞"


def test_a_first_gold_rank_past_32_bits_is_kept_exactly():
    data = _both()["version 2"]
    data["questions"][0][FIELD["first_gold_rank"]] = 2 ** 40 + 1
    assert read_artefact(data).questions[0].first_gold_rank == 2 ** 40 + 1


def test_the_sequence_indexes_slices_and_compares_as_a_tuple():
    qs = read_artefact(_both()["version 2"]).questions
    as_tuple = tuple(qs)
    assert isinstance(qs, Questions) and [q.id for q in as_tuple] == ["q3", "q1", "q2", "u1"]
    assert qs[-1] == as_tuple[-1] and qs[1:3] == as_tuple[1:3]
    assert qs == as_tuple and qs != as_tuple[:3]
    with pytest.raises(IndexError):
        qs[4]


def test_sorted_by_id_shows_the_same_records_in_id_order():
    qs = read_artefact(_both()["version 1"]).questions
    ordered = sorted_by_id(qs)
    assert [q.id for q in ordered] == sorted(q.id for q in qs)
    assert ordered[0] == next(q for q in qs if q.id == "q1")


def test_by_id_finds_each_question_and_knows_its_tags():
    by_id = ById(read_artefact(_both()["version 2"]).questions)
    assert sorted(by_id.keys()) == ["q1", "q2", "q3", "u1"] and "q9" not in by_id
    assert by_id["q2"].error == "timeout after 30 s"
    assert by_id.tags("q3") == ("how-to", "billing")
    assert by_id.get("q9") is None


def test_the_same_label_needs_the_same_gold_grades_stale_ids_and_flag():
    base = _both()["version 2"]
    head = json.loads(json.dumps(base))
    head["questions"][0][FIELD["gold"]][0][1] = 3  # a regrade
    head["questions"][1][FIELD["stale"]] = []  # the stale id came back
    b, h = read_artefact(base).columns, read_artefact(head).columns
    assert [same_label(b, i, h, i) for i in range(4)] == [False, False, True, True]
    assert same_label(b, 0, b, 0) and not same_label(b, 2, b, 3)


# --------------------------------------------------------------------------- a block at a time
from array import array  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from v2_rows import METRICS, ROWS, body_of  # noqa: E402

from ci_eval.core.artefact.artefact import add_block, add_row  # noqa: E402
from ci_eval.core.artefact.question_columns import QuestionColumns  # noqa: E402
from ci_eval.core.measure.metric_table import MetricTable  # noqa: E402
from ci_eval.inputs.typed_rows import decoded_block  # noqa: E402

# Pieces of rows the reader's fast path decodes (inputs/typed_rows.py), each with its rows as
# json gives them to the per-row path.
VALID_BLOCKS = st.lists(st.lists(ROWS, min_size=1, max_size=5).map(lambda rows: (rows, decoded_block(body_of(rows), METRICS)))
                        .filter(lambda drawn: drawn[1] is not None), min_size=1, max_size=3)


def _column_values(columns: QuestionColumns) -> dict:
    """Every column, arrays as their bytes (a NaN equals itself there), and the table's."""
    values = {name: value.tobytes() if isinstance(value, array) else value for name, value in vars(columns).items()
              if name != "table"}
    return {**values, "table": (columns.table._rows, columns.table._flat.tobytes())}


@settings(max_examples=150, deadline=None)
@given(VALID_BLOCKS, st.integers(0, 6), st.sampled_from([1, 2, 0.5]))
def test_a_block_fills_the_columns_as_its_rows_do_one_by_one(blocks, depth, relevance):
    one_by_one, by_block = (QuestionColumns(MetricTable(["mrr", "hit@5", "map"])) for _ in range(2))
    for rows, block in blocks:
        for row in rows:
            add_row(one_by_one, row, relevance, depth)
        add_block(by_block, block, relevance, depth)
    assert _column_values(by_block) == _column_values(one_by_one)
    assert [by_block.record(i) for i in range(len(by_block))] == [one_by_one.record(i) for i in range(len(by_block))]
