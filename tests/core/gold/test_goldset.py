import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.errors import InputErrors


def gold(*questions, **top):
    return {"schema_version": 1, "index_version": "v1", "questions": list(questions), **top}


def test_binary_and_graded_gold_and_unanswerable():
    g = parse_gold_set(
        gold(
            {"id": "q1", "question": "a?", "gold": ["c1", "c2"], "tags": ["how-to"]},
            {"id": "q2", "question": "b?", "gold": {"c3": 2, "c4": 1, "c5": -1}},
            {"id": "q3", "question": "c?", "gold": [], "unanswerable": True},
        ),
        "gold.json",
    )
    q1, q2, q3 = g.questions
    assert q1.gold == (("c1", 1), ("c2", 1)) and q1.tags == ("how-to",)
    assert q2.gold_map == {"c3": 2, "c4": 1, "c5": -1}
    assert q3.unanswerable and q3.gold == ()
    assert g.index_version == "v1"


def problems_of(data):
    with pytest.raises(InputErrors) as info:
        parse_gold_set(data, "gold.json")
    return info.value.lines()


def test_every_problem_is_reported_at_once_with_question_ids():
    lines = problems_of(
        gold(
            {"id": "q1", "question": "a?", "gold": []},
            {"id": "q2", "question": "b?", "gold": ["x"], "unanswerable": True},
            {"id": "q1", "question": "c?", "gold": ["y"]},
        )
    )
    assert len(lines) == 3
    assert any("question 'q1' (questions[0]).gold" in l and "answerable question needs" in l for l in lines)
    assert any("question 'q2' (questions[1]).gold" in l and "unanswerable" in l for l in lines)
    assert any("question 'q1' (questions[2])" in l and "duplicate question id" in l for l in lines)
    assert all(l.startswith("gold.json:") and "\n" not in l for l in lines)


def test_schema_errors_name_the_question_and_path():
    lines = problems_of(
        gold({"id": "q7", "question": "a?", "gold": {"c": "high"}, "colour": "red"})
    )
    assert any("question 'q7' (questions[0])" in l and "colour" in l for l in lines)
    assert any("questions[0]" in l and ".gold" in l for l in lines)


@pytest.mark.parametrize(
    "data, fragment",
    [
        ([], "expected a table/object"),
        ({"questions": []}, "schema_version"),
        ({"schema_version": 3, "questions": []}, "expected one of 1, 2"),
        (gold({"id": "", "question": "a", "gold": ["c"]}), "must not be empty"),
        (gold({"id": "q", "question": "a", "gold": ["c", "c"]}), "twice"),
        (gold({"id": "q", "question": "a", "gold": {"c": 0}}), "needs at least one gold id"),
        (gold({"id": "q", "gold": ["c"]}), "'question' is required"),
    ],
)
def test_bad_gold_sets(data, fragment):
    assert any(fragment in line for line in problems_of(data))


def test_answerable_without_gold_is_reported_with_the_shape_problems(tmp_path):
    import json

    from projects import cli, write_config

    (tmp_path / "gold.json").write_text(json.dumps(gold(
        {"id": "q1", "question": "", "gold": ["c1"]},              # shape: empty question
        {"id": "q2", "question": "no gold?", "gold": []},           # semantic: answerable, no gold
        {"id": "q3", "question": "zero?", "gold": {"c3": 0}},       # semantic: no grade above 0
    )))
    write_config(tmp_path, 'type = "run-file"\npath = "run.jsonl"\n')
    out = cli("check", cwd=tmp_path)
    assert out.returncode == 2
    lines = out.stderr.splitlines()
    assert any("question 'q1' (questions[0]).question: must not be empty" in l for l in lines)
    assert sum("an answerable question needs at least one gold id" in l for l in lines) == 2
    assert any(l.startswith("ci-eval: error: gold.json:question 'q2' (questions[1]).gold:") for l in lines)


def test_anchored_gold_set_parses_and_the_schema_accepts_it():
    from ci_eval.core.gold.anchors import Anchor
    from ci_eval.core.gold.fingerprint import text_hash
    from ci_eval.core.gold.minhash import signature
    from ci_eval.core.validate import schema_valid
    from ci_eval.schemas import load

    doc = {"schema_version": 2, "questions": [{"id": "q", "question": "a?", "gold": ["c"]}],
           "anchors": {"c": {"doc": "d", "start": 0, "end": 4, "hash": text_hash("text"),
                             "signature": signature("some text here")}}}
    assert schema_valid(doc, load("goldset"))
    gold = parse_gold_set(doc, "gold.json")
    assert gold.anchors == {"c": Anchor("d", 0, 4, text_hash("text"), signature("some text here"))}
    with pytest.raises(InputErrors) as exc:
        parse_gold_set(dict(doc, schema_version=1), "gold.json")
    assert exc.value.problems[0].place == "schema_version"


def test_labelling_provenance_is_checked_like_the_rest():
    lines = problems_of(gold({"id": "q1", "question": "a?", "gold": ["x"]},
                             provenance={"pending": [{"id": "c-1", "gold": {}}],
                                         "judgements": {"q1": {"chunks": {"x": {"grade": "high"}}}}}))
    assert any("provenance.pending[0]" in line and "question" in line for line in lines)
    assert any("provenance.judgements.q1.chunks.x.grade" in line for line in lines)


_ID = st.sampled_from(["q1", "q2", "q3"])
_CHUNK = st.sampled_from(["a", "b", "c"])
_RAW_QUESTION = st.fixed_dictionaries(
    {"id": _ID, "question": st.just("?"),
     "gold": st.lists(_CHUNK, max_size=3) | st.dictionaries(_CHUNK, st.integers(-1, 2), max_size=3)},
    optional={"tags": st.lists(st.sampled_from(["t", "u"]), max_size=2), "unanswerable": st.booleans()})


@settings(max_examples=200, deadline=None)
@given(st.lists(_RAW_QUESTION, max_size=4))
def test_the_builder_accepts_and_builds_what_the_whole_parse_does(questions):
    """A question at a time (the streamed load) against the whole document: the same gold
    set when it is valid, a give-up when the whole parse finds any problem."""
    from ci_eval.core.gold.goldset import GoldSetBuilder

    builder = GoldSetBuilder()
    took = all([builder.add(q) for q in questions])
    try:
        whole = parse_gold_set({"schema_version": 1, "questions": questions}, "gold.json")
    except InputErrors:
        whole = None
    built = builder.finish({"schema_version": 1}) if took else None
    assert built == whole


def test_evidence_is_parsed_and_every_problem_of_it_reported_at_once_with_its_place():
    from ci_eval.core.gold.evidence import Evidence

    ok = parse_gold_set({"schema_version": 1, "questions": [
        {"id": "q1", "question": "a?", "gold": ["c1"], "evidence": [
            {"doc": "d.md", "start": 3, "end": 9, "grade": 2}, {"doc": "d.md", "quote": "some words"}]}]}, "g.json")
    assert ok.questions[0].gold == (("c1", 1),)
    assert ok.questions[0].evidence == (Evidence("d.md", 3, 9, 2), Evidence("d.md", grade=1, quote="some words"))
    with pytest.raises(InputErrors) as caught:
        parse_gold_set({"schema_version": 1, "questions": [
            {"id": "q1", "question": "a?", "gold": [], "evidence": [
                {"doc": "d.md", "start": 9, "end": 3}, {"doc": "d.md"}, {"doc": "d.md", "start": 1},
                {"doc": "d.md", "quote": "x", "start": 0, "end": 1}, {"doc": "d.md", "quote": 7}]},
            {"id": "q2", "question": "b?", "gold": [], "evidence": [{"doc": "d.md", "start": 0, "end": 4, "grade": 0}]},
            {"id": "q3", "question": "c?", "gold": [], "unanswerable": True,
             "evidence": [{"doc": "d.md", "quote": "y"}]}]}, "g.json")
    where = "g.json:question 'q1' (questions[0]).evidence"
    assert sorted(caught.value.lines()) == sorted([
        f"{where}[4].quote: expected a string, got 7",
        f'{where}[0].end: "end" (3) must be after "start" (9)',
        f'{where}[1]: a piece of evidence needs "start" and "end", or "quote"',
        f'{where}[2]: a span needs "start" and "end" together',
        f'{where}[3]: give "start" and "end", or "quote", not both',
        "g.json:question 'q2' (questions[1]).gold: an answerable question needs at least one gold id or piece of "
        'evidence with a grade of 1 or more (or mark it "unanswerable": true)',
        "g.json:question 'q3' (questions[2]).evidence: an unanswerable question must have no gold ids (gold: []) "
        "and no evidence"])
