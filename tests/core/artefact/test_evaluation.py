"""The evaluation's conventions: stale gold, unanswerable questions, errors, tags.
Expected values are derived by hand from the rankings below."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.artefact.evaluation import abstains, evaluate
from ci_eval.core.artefact.results import Retrieved, failed
from ci_eval.core.gold.goldset import GoldSet, Question

GOLD = GoldSet(
    1,
    "idx-1",
    (
        Question("q1", "first?", (("a", 1),), ("how-to",)),
        Question("q2", "second?", (("b", 2), ("c", 1)), ("how-to", "api")),
        Question("q3", "stale?", (("gone", 1),), ("api",)),
        Question("q4", "partly stale?", (("d", 1), ("gone2", 1)), ()),
        Question("q5", "nothing?", (), ("off-topic",), unanswerable=True),
        Question("q6", "broken?", (("a", 1),), ()),
    ),
)
INDEX = frozenset("abcdxyz")
METRICS = ("hit@1", "hit@3", "recall@3", "mrr", "ndcg@3")


def r(*ids, scores=None):
    scores = scores or [10.0 - i for i in range(len(ids))]
    return Retrieved(ids=tuple(ids), scores=tuple(scores), latency_ms=2.0)


RETRIEVED = [
    ("q1", r("x", "a", "y")),
    ("q2", r("c", "x", "b")),
    ("q3", r("x")),
    ("q4", r("y", "z", "d")),
    ("q5", r("z", scores=[0.2])),
    ("q6", failed("retriever raised RuntimeError: boom", 1.0)),
]


@pytest.fixture(scope="module")
def result():
    return evaluate(GOLD, RETRIEVED, k=1, metrics=METRICS, index_ids=INDEX, abstain_below=0.5)


def by_id(result):
    return {q["id"]: q for q in result.questions}


def test_statuses(result):
    status = {q: e["status"] for q, e in by_id(result).items()}
    assert status == {"q1": "ok", "q2": "ok", "q3": "stale", "q4": "ok", "q5": "unanswerable", "q6": "error"}


def test_stale_ids_listed_and_removed_from_gold(result):
    q = by_id(result)
    assert q["q3"]["stale"] == ["gone"] and q["q3"]["metrics"] == {}
    assert q["q4"]["stale"] == ["gone2"]
    # q4 is measured on its live gold only: d at rank 3 -> recall@3 = 1/1, not 1/2.
    assert q["q4"]["metrics"]["recall@3"] == 1.0
    assert q["q4"]["metrics"]["mrr"] == 1 / 3
    assert result.summary["stale"] == {"questions": 1, "ids": 2}


def test_per_question_metrics_are_derivations(result):
    q = by_id(result)
    assert q["q1"]["metrics"] == {"hit@1": 0.0, "hit@3": 1.0, "recall@3": 1.0, "mrr": 1 / 2, "ndcg@3": 1 / math.log2(3)}
    # q2: c (grade 1) at rank 1, b (grade 2) at rank 3; ideal order b, c.
    dcg = 1 / math.log2(2) + 2 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert q["q2"]["metrics"]["ndcg@3"] == pytest.approx(dcg / idcg, abs=1e-15)
    assert q["q2"]["first_gold_rank"] == 1 and q["q1"]["first_gold_rank"] == 2
    assert q["q6"]["metrics"] == {m: 0.0 for m in METRICS}
    assert q["q6"]["error"] == "retriever raised RuntimeError: boom"


def test_means_cover_ok_and_error_questions_only(result):
    overall = result.summary["overall"]
    assert overall["count"] == 4  # q1, q2, q4, q6
    assert overall["means"]["mrr"] == pytest.approx((1 / 2 + 1 + 1 / 3 + 0) / 4)
    assert overall["means"]["hit@1"] == pytest.approx((0 + 1 + 0 + 0) / 4)
    assert result.summary["by_tag"]["how-to"]["count"] == 2
    assert result.summary["by_tag"]["how-to"]["means"]["hit@3"] == 1.0
    assert "api" in result.summary["by_tag"] and result.summary["by_tag"]["api"]["count"] == 1
    assert result.summary["errors"] == 1


def test_unanswerable_measured_by_cutoff(result):
    q5 = by_id(result)["q5"]
    assert q5["top_score"] == 0.2 and q5["metrics"] == {}
    assert result.summary["unanswerable"] == {"count": 1, "abstained": 1, "cutoff": 0.5}


@pytest.mark.parametrize(
    "top, cutoff, expected",
    [(None, 0.5, True), (0.4, 0.5, True), (0.5, 0.5, False), (0.9, None, False), (None, None, True)],
)
def test_abstention_rule(top, cutoff, expected):
    assert abstains(top, cutoff) is expected


def test_without_manifest_nothing_is_stale():
    res = evaluate(GOLD, RETRIEVED, k=1, metrics=METRICS, index_ids=None)
    assert by_id(res)["q3"]["status"] == "ok" and res.summary["stale"] == {"questions": 0, "ids": 0}


def test_answers_are_attached():
    res = evaluate(GOLD, RETRIEVED, k=1, metrics=METRICS, answers={"q1": True, "q2": False})
    q = by_id(res)
    assert (q["q1"]["answer_correct"], q["q2"]["answer_correct"], q["q4"]["answer_correct"]) == (True, False, None)


def test_relevance_level_two_counts_only_grade_two():
    res = evaluate(GOLD, RETRIEVED, k=1, metrics=METRICS, relevance_level=2, index_ids=INDEX)
    q = by_id(res)
    # q1's only gold has grade 1 < 2: measured, and scores 0 as in trec_eval.
    assert q["q1"]["status"] == "ok" and q["q1"]["metrics"]["hit@3"] == 0.0
    assert q["q2"]["first_gold_rank"] == 3 and q["q2"]["metrics"]["mrr"] == 1 / 3


# --------------------------------------------------------------------------- through the CLI


def test_stale_counts_are_distinct_and_a_stale_id_graded_0_does_not_make_a_question_stale(tmp_path):
    from projects import artefact, cli, write_config, write_gold, write_module

    write_gold(tmp_path, [
        # "gone" is cited by two questions: one stale id, two questions citing it
        {"id": "q1", "question": "one", "gold": {"live": 2, "gone": 2}},
        {"id": "q2", "question": "two", "gold": {"gone": 2, "other": 2}},
        # relevance_level 2: "weak" is live but not relevant, "judged-no" (grade 0) is gone;
        # a missing id judged not relevant cannot make the question stale
        {"id": "q3", "question": "three", "gold": {"weak": 1, "judged-no": 0, "live": 2}},
        {"id": "q4", "question": "four", "gold": {"weak": 1, "judged-no": 0}},
    ])
    (tmp_path / "index.txt").write_text("live\nweak\n")
    write_module(tmp_path, "retriever", "def search(question, depth):\n    return [('live', 1.0)]\n")
    write_config(tmp_path, 'type = "python"\ntarget = "retriever:search"\n',
                 extra='relevance_level = 2\n[index]\nmanifest = "index.txt"\n')
    out = cli("run", "--out", "run.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    art = artefact(tmp_path)
    status = {q["id"]: q["status"] for q in art["questions"]}
    # q2 has no relevant live gold left; q4 never had any at level 2, so it is measured (0)
    assert status == {"q1": "ok", "q2": "stale", "q3": "ok", "q4": "ok"}
    # distinct ids: "gone", "other", "judged-no" (q3 and q4 cite the last one twice)
    assert art["summary"]["stale"] == {"questions": 1, "ids": 3}
    assert "stale gold: 3 distinct gold id(s) missing from the index, in 4 question(s)" in out.stdout


def test_judged_at_k_per_question_and_its_mean():
    from ci_eval.core.artefact.evaluation import evaluate
    from ci_eval.core.artefact.results import Retrieved
    from ci_eval.core.gold.goldset import parse_gold_set

    gold = parse_gold_set({"schema_version": 1, "questions": [
        {"id": "q1", "question": "a?", "gold": {"a": 1, "b": 0}},
        {"id": "q2", "question": "b?", "gold": ["x"]},
        {"id": "q3", "question": "c?", "gold": [], "unanswerable": True},
    ]}, "gold.json")
    got = evaluate(gold, [("q1", Retrieved(("a", "c", "b", "d"), (4.0, 3.0, 2.0, 1.0))),
                          ("q2", Retrieved(("y",), (1.0,))), ("q3", Retrieved(("a",), (1.0,)))],
                   k=3, metrics=("hit@3",))
    assert [q["judged_at_k"] for q in got.questions] == [2 / 3, 0 / 1, None]
    assert got.summary["judged_at_k"] == {"k": 3, "mean": (2 / 3 + 0) / 2}


# --------------------------------------------------------------------------- the batch path


_IDS = [f"c{i}" for i in range(12)]


@st.composite
def _question_and_ranking(draw, i: int = 0):
    unanswerable = draw(st.booleans()) and draw(st.booleans())
    gold = () if unanswerable else tuple(draw(st.dictionaries(st.sampled_from(_IDS), st.integers(-1, 3),
                                                              min_size=1, max_size=10)).items())
    ids = tuple(draw(st.lists(st.sampled_from(_IDS + ["new"]), unique=True, max_size=15)))
    r = (failed("boom") if draw(st.integers(0, 9)) == 0
         else Retrieved(ids, tuple(float(len(ids) - j) for j in range(len(ids))), 1.0))
    return Question(f"q{i}", "?", gold, (), unanswerable), r


@settings(max_examples=150, deadline=None)
@given(st.lists(_question_and_ranking(), min_size=1, max_size=12), st.integers(0, 2), st.integers(1, 6),
       st.sets(st.sampled_from(_IDS)) | st.none(), st.integers(1, 5))
def test_batches_hold_each_question_to_the_definitions(pairs, level, k, index, batch):
    """Stale ids, first gold rank, judged@k and every metric value as the definitions give
    them for one question at a time (metrics.compute on its live gold), whatever the batch."""
    from ci_eval.core.compare.judged import judged_at_k
    from ci_eval.core.measure.metrics import compute

    pairs = [(Question(f"q{i}", q.question, q.gold, q.tags, q.unanswerable), r) for i, (q, r) in enumerate(pairs)]
    gold = GoldSet(1, None, tuple(q for q, _ in pairs))
    index_ids = None if index is None else frozenset(index)
    metrics = ("hit@2", "recall@3", "precision@2", "ndcg@3", "mrr", "map")
    got = evaluate(gold, [(q.id, r) for q, r in pairs], k=k, metrics=metrics, relevance_level=level,
                   index_ids=index_ids, batch=batch).questions
    for (q, r), row in zip(pairs, got):
        stale = sorted({g for g, _ in q.gold if index_ids is not None and g not in index_ids})
        live = {g: grade for g, grade in q.gold if g not in stale}
        assert row["stale"] == stale
        assert row["first_gold_rank"] == next((n for n, c in enumerate(r.ids, 1) if live.get(c, 0) >= level), None)
        if row["status"] in ("ok", "error"):
            judged = judged_at_k(r.ids, dict(q.gold), k)
            assert row["judged_at_k"] == judged and type(row["judged_at_k"]) is type(judged)
        if row["metrics"]:
            expected = compute(metrics, [r.ids], [live], level)
            assert row["metrics"] == {m: float(expected[m][0]) for m in metrics}


@st.composite
def _answered(draw, i: int = 0):
    q, r = draw(_question_and_ranking(i))
    if r.failed:
        r = Retrieved(("c1",), (0.5,), None)
    if q.unanswerable and draw(st.booleans()):  # built by hand: unanswerable, yet with gold
        q = Question(q.id, q.question, (("c2", 1),), ("t",), True)
    scores = tuple(float(len(r.ids) - j) / draw(st.sampled_from([1, 2, 3])) for j in range(len(r.ids)))
    pairs = tuple(zip(r.ids, scores)) if draw(st.booleans()) else None
    return q, Retrieved(r.ids, scores, draw(st.sampled_from([None, 1.0, 2.34567])), None, (), pairs)


@settings(max_examples=200, deadline=None)
@given(st.lists(_answered(), min_size=1, max_size=10), st.integers(1, 2), st.integers(1, 6),
       st.sets(st.sampled_from(_IDS)) | st.none())
def test_a_batch_made_a_column_at_a_time_is_the_batch_made_a_question_at_a_time(pairs, level, k, index):
    """plain_rows against score and _row with the batch's metrics measured as before: the
    same rows, to the type of every value (an int where a whole value is written as one),
    or None when some question cites an id missing from the index."""
    from ci_eval.core.artefact.evaluation import _emit, _row, missing_from_index, plain_rows, score
    from ci_eval.core.measure.names import resolve_metric

    pairs = [(Question(f"q{i}", q.question, q.gold, q.tags, q.unanswerable), r) for i, (q, r) in enumerate(pairs)]
    by_id = {q.id: q for q, _ in pairs}
    index_ids = None if index is None else frozenset(index)
    missing = missing_from_index(index_ids, by_id.values())
    resolved = [resolve_metric(m) for m in ("hit@2", "recall@3", "ndcg@3", "mrr", "map")]
    got = plain_rows([(q.id, r) for q, r in pairs], by_id, k, level, missing, resolved)
    scored = [score(q, r, k, level, index_ids, missing) for q, r in pairs]
    expected = _emit([_row(s) for s in scored], [s for s in scored if s.in_means], [], resolved, level, [], None, None)
    if got is None:
        assert any(s.stale for s in scored) or any(g in missing for q, _ in pairs for g, _ in q.gold)
        return
    assert repr(got) == repr(expected)


def test_a_batch_with_a_failed_question_or_at_level_0_is_made_a_question_at_a_time():
    from ci_eval.core.artefact.evaluation import plain_rows
    from ci_eval.core.measure.names import resolve_metric

    q, hit = Question("q", "?", (("a", 1),)), [resolve_metric("hit@1")]
    assert plain_rows([("q", failed("boom"))], {"q": q}, 3, 1, frozenset(), hit) is None
    assert plain_rows([("q", Retrieved(("a",), (1.0,)))], {"q": q}, 3, 0, frozenset(), hit) is None
    assert plain_rows([("q", Retrieved(("a",), (1.0,)))], {"q": q}, 3, 1, frozenset({"a"}), hit) is None
    # a at rank 1 of 1: hit@1 = 1, judged@3 = 1/1, both whole and written as ints, as the top score
    assert plain_rows([("q", Retrieved(("a",), (1.0,)))], {"q": q}, 3, 1, frozenset(), hit) == [
        ["q", "?", (), False, "ok", [("a", 1)], [], [1], 1, 1, None, None, 1, None, (), (("a", 1.0),)]]
