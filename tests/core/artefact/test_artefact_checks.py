"""Meaning checks of a schema-valid artefact: names, ranges, ids and counts."""

import copy
import json

import pytest
from suite_paths import BAD_INPUTS_PROJECT

from ci_eval.core.artefact.artefact_checks import artefact_problems, metric_name_problem

BASE = json.loads((BAD_INPUTS_PROJECT / "base.json").read_text("utf-8"))


def problems(change) -> list[str]:
    art = copy.deepcopy(BASE)
    change(art)
    return [str(p) for p in artefact_problems(art, "base.json")]


def test_what_ci_eval_writes_has_no_problem():
    assert artefact_problems(BASE, "base.json") == []


@pytest.mark.parametrize("name", ["hit@5", "recall@15", "precision@1", "ndcg@10", "mrr", "mrr@10", "map"])
def test_canonical_names_are_metric_names(name):
    assert metric_name_problem(name) is None


@pytest.mark.parametrize("name, why", [
    ("@acme/security-team", "not a metric ci-eval computes"),
    ("P_5", "not how ci-eval writes a metric name (it writes 'precision@5')"),
    ("hit@²", "not a metric ci-eval computes"),
    (5, "a metric name must be a string"),
])
def test_other_names_are_refused_without_being_repeated(name, why):
    assert metric_name_problem(name) == why


def test_every_problem_is_reported_at_once():
    def change(art):
        art["metrics"][1] = "<img src=x>"
        art["summary"]["overall"]["means"]["map"] = 1.25
        art["questions"][1]["id"] = art["questions"][0]["id"]
        art["summary"]["errors"] = 3

    assert problems(change) == [
        "base.json:metrics[1]: not a metric ci-eval computes",
        "base.json:questions[0].id: question id 'q1' appears 2 times",
        "base.json:summary.overall.means.map: 1.25 is out of range: map lies in [0, 1]",
        "base.json:summary.errors: says 3 but the artefact holds 0 questions with an error",
    ]


def test_a_tag_is_named_by_its_position_not_its_text():
    def change(art):
        art["summary"]["by_tag"]["@org/team"] = {"count": 1, "means": {}}

    assert problems(change) == [
        "base.json:summary.by_tag.[tag 2].count: says 1 but the artefact holds 0 answered or "
        "failed questions with this tag"]


def test_an_artefacts_grades_have_the_gold_sets_bounds():
    from ci_eval.schemas import load

    def grade_bounds(node):
        if isinstance(node, dict):
            if node.get("type") == "integer" and "maximum" in node and "minimum" in node:
                yield node["minimum"], node["maximum"]
            for value in node.values():
                yield from grade_bounds(value)
        elif isinstance(node, list):
            for value in node:
                yield from grade_bounds(value)

    gold_props = load("artefact")["$defs"]["question"]["properties"]["gold"]
    assert set(grade_bounds(load("goldset"))) == set(grade_bounds(gold_props)) == {(-1000, 1000)}


def test_a_shards_part_is_held_to_names_and_values_but_not_to_the_whole_runs_counts():
    def change(art):
        art["shard"] = {"index": 1, "count": 2}
        art["gold_set"]["questions"] = 30  # the whole gold set; the part holds 3
        art["summary"]["overall"]["means"]["hit@2"] = 7.0

    assert problems(change) == [
        "base.json:summary.overall.means.hit@2: 7.0 is out of range: hit@2 lies in [0, 1]"]


def test_the_shape_of_an_artefact_is_checked_without_its_rows_but_not_its_counts():
    """What a reader of a few fields of each row (`ci-eval history`) holds an artefact to:
    every mean and the tags' number, not the counts the summary states."""
    from factories import artefact, as_v2, spec

    from ci_eval.core.artefact.artefact_checks import new_problems, shape_problems
    from ci_eval.core.limits import MAX_TAGS

    def found(change, tags=1):
        data = as_v2(artefact([spec("q1", ["g"], ["g"], tags=["t"]), spec("q2", ["g"], ["x"], tags=["t"])]))
        change(data)
        problems = new_problems(data, "a.json")
        shape_problems(data, 2, tags, problems)
        return [p.message for p in problems.found]

    assert found(lambda d: None) == []
    assert found(lambda d: d["summary"]["overall"].update(count=7)) == []
    assert found(lambda d: d["gold_set"].update(questions=7)) == []
    assert found(lambda d: d["summary"]["overall"]["means"].update({"hit@5": 7.0})) == [
        "7.0 is out of range: hit@5 lies in [0, 1]"]
    assert found(lambda d: None, tags=MAX_TAGS + 1) == [f"names {MAX_TAGS + 1:,} distinct tags, over the limit of {MAX_TAGS:,}"]


# The counts from the columns a read fills say what the counts from each question's view say.
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ci_eval.core.artefact.artefact import read_artefact  # noqa: E402
from ci_eval.core.artefact.artefact_checks import column_problems, new_problems, row_view, whole_problems  # noqa: E402
from ci_eval.core.artefact.question_row import FIELD  # noqa: E402

QUESTIONS = st.lists(st.tuples(st.sampled_from(["ok", "error", "stale", "unanswerable"]),
                               st.lists(st.sampled_from(["faq", "how-to", "@org/team"]), max_size=3)),
                     max_size=8)
COUNTS = st.none() | st.integers(0, 6)


@settings(max_examples=200, deadline=None)
@given(QUESTIONS, COUNTS, COUNTS, COUNTS, st.dictionaries(st.sampled_from(["faq", "how-to", "x"]), COUNTS))
def test_the_counts_of_the_columns_are_worded_as_the_counts_of_the_views(questions, overall, errors, listed, tags):
    from factories import artefact, as_v2, spec

    data = as_v2(artefact([spec(f"q{i}", ["g"], tags=tags_) for i, (_, tags_) in enumerate(questions)]))
    for row, (status, _) in zip(data["questions"], questions):
        row[FIELD["status"]] = status
    summary = data["summary"]
    for value, place in ((overall, summary["overall"]), (listed, data["gold_set"])):
        place.update({} if value is None else {"count" if place is summary["overall"] else "questions": value})
    if errors is not None:
        summary["errors"] = errors
    summary["by_tag"] = {tag: {"count": n, "means": {}} for tag, n in tags.items() if n is not None}
    from_views, from_columns = new_problems(data, "a.json"), new_problems(data, "a.json")
    whole_problems(data, [row_view(row) for row in data["questions"]], from_views)
    column_problems(data, read_artefact(data).columns, from_columns)
    assert list(map(str, from_columns.found)) == list(map(str, from_views.found))


CHAIN = [{"name": "pool", "depth": 50}, {"name": "results", "depth": 5}]


def _staged(record: dict, chain=CHAIN, qid="q1"):
    return lambda art: art.update(stages={"chain": chain, "questions": {qid: record}})


def test_stage_records_ci_eval_writes_have_no_problem():
    # q2 has two relevant gold chunks, q1 one (tests/bad_inputs/_project/base.json)
    assert problems(_staged({"gold": 2, "ranks": [[3, 40], [1]], "added": [0, 1]}, qid="q2")) == []
    assert problems(_staged({"gold": 1, "ranks": [None, []]})) == []


@pytest.mark.parametrize("qid, record, why", [
    ("q-forged", {"gold": 1, "ranks": [[1], [1]]}, "stages.questions.q-forged: a record for a question this run does not hold"),
    ("q3", {"gold": 1, "ranks": [[1], [1]]}, "stages.questions.q3: a record for a question with no relevant gold"),  # unanswerable
    ("q1", {"gold": 2, "ranks": [[1, 2], [1]]}, "stages.questions.q1: counts 2 relevant gold chunks; the question has 1"),
])
def test_stage_records_are_held_to_the_artefact_s_own_questions(qid, record, why):
    assert any(why in p for p in problems(_staged(record, qid=qid))), problems(_staged(record, qid=qid))


def test_call_records_are_held_to_the_artefact_s_own_questions():
    def calls(qid, ranks):
        return lambda art: art.update(calls={"budget": None, "questions": {qid: {
            "sizes": [5, 5], "ranks": ranks, "found_at": 1, "final_hit": True}}})

    assert problems(calls("q2", [[1, 2], []])) == []
    assert problems(calls("q-forged", [[1], []])) == [
        "base.json:calls.questions.q-forged: a record for a question this run does not hold"]
    assert problems(calls("q1", [[1, 2], []])) == [
        "base.json:calls.questions.q1: a call ranks more gold chunks than the question's 1 relevant ones"]


@pytest.mark.parametrize("record, chain, why", [
    ({"gold": 1, "ranks": [[1]]}, CHAIN, "2 stages in the chain, not 1"),
    ({"gold": 1, "ranks": [[60], []]}, CHAIN, "ranks of stage 'pool' are not ranks ci-eval writes"),  # past its depth
    ({"gold": 1, "ranks": [[2, 1], []]}, CHAIN, "ranks of stage 'pool' are not ranks ci-eval writes"),  # out of order
    ({"gold": 1, "ranks": [[1, 2], []]}, CHAIN, "ranks of stage 'pool' are not ranks ci-eval writes"),  # more than the gold
    ({"gold": 1, "ranks": [[1], [1]]}, [CHAIN[0], CHAIN[0]], "stage names repeat"),
])
def test_stage_records_ci_eval_would_never_write_are_refused(record, chain, why):
    assert any(why in p for p in problems(_staged(record, chain))), problems(_staged(record, chain))
