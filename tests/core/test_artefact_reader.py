"""The typed artefact: one reader from the validated JSON dict, the factories' artefacts
valid against the artefact schema, and the comparison reading artefacts only through it."""

from __future__ import annotations

import ast
import json

import pytest
from factories import artefact, as_v2, run, spec
from factories import ranked_with_gold_at as at
from suite_paths import PACKAGE

from ci_eval.core.artefact import Artefact, read_artefact, validate_artefact

HISTORY = [{"sha": "b" * 40, "created_at": "2026-11-29T02:00:00Z", "means": {"hit@5": 0.5}}]
SHAPES = {
    "hits and misses": [spec("q1", ["g"], at(1), tags=["how-to"]), spec("q2", ["g"], at(None))],
    "graded, multi-chunk": [spec("q1", {"a": 2, "b": 1, "c": 0}, ["b", "x", "a"])],
    "unanswerable": [spec("u1", unanswerable=True, ranking=["x"]), spec("u2", unanswerable=True)],
    "retriever error": [spec("q1", ["g"], error="timeout after 30 s")],
    "stale gold": [spec("q1", ["g"], at(None), stale=["g"]), spec("q2", ["g", "h"], at(2), stale=["g"])],
    "answers and warnings": [spec("q1", ["g"], at(1), answer_correct=False,
                                  warnings=["1 duplicate id(s) dropped (first occurrence kept)"])],
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_factories_write_artefacts_the_schema_accepts(shape):
    data = artefact(SHAPES[shape], history=HISTORY)
    # through JSON, as a stored artefact is read back
    assert validate_artefact(json.loads(json.dumps(data)), f"factory: {shape}") is not None


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_version_2_artefact_reads_as_its_version_1_twin(shape):
    data = artefact(SHAPES[shape], history=HISTORY)
    twin = json.loads(json.dumps(as_v2(data)))
    assert validate_artefact(twin, f"factory v2: {shape}") is twin
    v1, v2 = read_artefact(data), read_artefact(twin)
    assert v2 == v1
    # the fields equality leaves out, compared too
    assert [q.metrics for q in v2.questions] == [q.metrics for q in v1.questions]
    assert [q.top for q in v2.questions] == [q.top for q in v1.questions]
    assert v2.config == v1.config and v2.depth == v1.depth == 5


def test_the_schema_check_would_catch_a_factory_mistake():
    data = artefact(SHAPES["hits and misses"])
    del data["questions"][0]["status"]
    with pytest.raises(Exception, match="status"):
        validate_artefact(data, "factory")


def test_the_reader_types_every_part():
    a = run(SHAPES["graded, multi-chunk"] + SHAPES["stale gold"][1:], history=HISTORY,
            sha="c" * 40)
    assert isinstance(a, Artefact) and read_artefact(a) is a
    assert a.header.sha == "c" * 40 and a.header.k == 5 and a.header.index_checked
    q1 = a.questions[0]
    # relevant gold only (grade >= 1), with its rank in the recorded ranking
    assert [(g.id, g.grade, g.rank) for g in q1.gold_ranks] == [("a", 2.0, 3), ("b", 1.0, 1)]
    assert q1.returned == 3 and q1.hit(5) is True
    (q2,) = [q for q in a.questions if q.id == "q2"]
    assert [g.id for g in q2.gold_ranks] == ["h"]  # the stale id is not gold any more
    assert a.summary.overall.count == 2 and a.summary.stale_ids == 1
    assert a.history[0].means == (("hit@5", 0.5),)


def test_hit_at_k_is_the_measured_value_never_recomputed():
    data = artefact([spec("q1", ["g"], at(1))])
    data["questions"][0]["metrics"]["hit@5"] = 0.0  # the run said so; the rank is not asked
    (q,) = read_artefact(data).questions
    assert q.first_gold_rank == 1 and q.hit(5) is False
    assert q.hit(7) is None  # not measured: unknown, not guessed from the rank


# Modules of the comparison: after the reader, they see Artefact and QuestionResult only.
COMPARISON = sorted(
    [p for p in (PACKAGE / "core").glob("*.py") if p.name.startswith(
        ("diff", "gate", "render", "matrix", "cutoff", "trend", "run_warnings", "budget",
         "markdown", "textfmt", "stats", "judged"))] + [PACKAGE / "report.py"])
# The run's side: the rows are typed records and tuples from the evaluation to the writer.
RUN_SIDE = [PACKAGE / "core" / "evaluation.py", PACKAGE / "core" / "run_columns.py",
            PACKAGE / "core" / "artefact_writer.py", PACKAGE / "retrieval" / "pipeline.py"]


def _artefact_keys() -> set[str]:
    schema = json.loads((PACKAGE / "schemas" / "artefact.schema.json").read_text())
    keys: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            keys.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return keys


def string_key_reads(source: str, keys: set[str]) -> list[str]:
    """``x["questions"]`` and ``x.get("summary")`` for artefact keys: a dict being read."""
    found = []
    for node in ast.walk(ast.parse(source)):
        key = None
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and isinstance(node.ctx, ast.Load)):  # building a dict is not reading one
            key = node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant)):
            key = node.args[0].value
        if isinstance(key, str) and key in keys:
            found.append(f"line {node.lineno}: {key}")
    return found


@pytest.mark.parametrize("module", COMPARISON + RUN_SIDE, ids=lambda p: p.name)
def test_the_comparison_never_indexes_an_artefact_dict(module):
    assert string_key_reads(module.read_text(), _artefact_keys()) == []


def test_the_check_sees_a_dict_read():
    sample = 'def f(a):\n    a["k"] = 1\n    return a["questions"], a.get("summary"), a.get("unrelated")\n'
    assert string_key_reads(sample, _artefact_keys()) == ["line 3: questions", "line 3: summary"]


def test_a_k_written_as_a_float_still_keeps_the_top_k():
    data = artefact([spec("q1", ["g"], at(1))])
    data["k"] = 5.0  # the schema's "integer" accepts it
    assert validate_artefact(json.loads(json.dumps(data)), "a.json") is not None
    assert read_artefact(data).depth == 5 and len(read_artefact(data).questions[0].top) == 5
