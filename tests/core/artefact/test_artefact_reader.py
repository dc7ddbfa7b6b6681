"""The typed artefact: one reader from the validated JSON dict, the factories' artefacts
valid against the artefact schema, and the comparison reading artefacts only through it."""

from __future__ import annotations

import ast
import json

import pytest
from factories import artefact, as_v2, run, spec
from factories import ranked_with_gold_at as at
from suite_paths import PACKAGE

from ci_eval.core.artefact.artefact import Artefact, read_artefact, validate_artefact
from ci_eval.errors import InputErrors

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


@pytest.mark.parametrize("version", [[2], {"v": 2}, "2", None])
def test_a_schema_version_of_the_wrong_type_is_a_worded_problem(version):
    data = artefact(SHAPES["hits and misses"])
    data["schema_version"] = version
    with pytest.raises(InputErrors, match="schema_version"):
        validate_artefact(data, "base.json")


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


# The modules that handle artefact JSON itself: the readers, the writers, the schema checks
# and the row format. Every other module sees typed objects (Artefact, RunHead, Part).
ARTEFACT_JSON = {
    "core/artefact/artefact.py", "core/artefact/run_head.py", "inputs/artefact_file.py", "inputs/artefact_stream.py",  # read
    "inputs/typed_rows.py",  # read: a piece of rows decoded into the schema's types
    "core/artefact/artefact_writer.py", "inputs/artefact_out.py",  # write
    "core/artefact/artefact_checks.py", "core/artefact/artefact_rows.py", "core/artefact/row_blocks.py", "core/artefact/question_row.py",  # check, rows
    "core/artefact/row_recheck.py",  # a part's rows computed again from their own gold and ranking
    "core/gold/remap.py",  # builds and reads the index.remap value an artefact records
    "core/gold/remap_record.py",  # builds and reads the gold_set.remap value an artefact records
    "core/artefact/stage_records.py",  # builds and reads the stages and calls values an artefact records
    "core/answers.py",  # builds and reads the answers value an artefact records (where the verdicts came from)
    "core/compare/selftest.py",  # builds the simulated heads: a checked base artefact's rows, rewritten
    "inputs/sweep_rows.py",  # reads the row number, label and row count a sweep row records in its config
}
# Keys of other formats ci-eval reads that the artefact schemas also use, so a read of one
# says nothing about which format is read: pyproject.toml's [tool] table, the command
# retriever's answers and the retrieval cache's entries ("error", "warnings"), a regular
# expression's named groups ("name"), GitHub's error responses ("errors"), a kept question's
# origin in the gold set's provenance ("kind", core/gold/origin.py).
OTHER_FORMATS = {"tool", "error", "warnings", "name", "errors", "kind"}


def _schema_keys(name: str) -> set[str]:
    schema = json.loads((PACKAGE / "schemas" / f"{name}.schema.json").read_text())
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


def artefact_only_keys() -> set[str]:
    """Keys that name a part of a run artefact and of nothing else ci-eval reads: in either
    artefact schema, in none of the gold-set, config and manifest schemas (so ``q["question"]``
    on a gold-set question or ``cfg["metrics"]`` is no artefact read), and not in
    OTHER_FORMATS."""
    artefact = _schema_keys("artefact") | _schema_keys("artefact-v2")
    others = _schema_keys("goldset") | _schema_keys("config") | _schema_keys("manifest")
    return artefact - others - OTHER_FORMATS


def string_key_reads(source: str, keys: set[str]) -> list[str]:
    """``x["summary"]`` and ``x.get("summary")`` for the given keys: a dict being read."""
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


def artefact_dict_reads(package) -> dict[str, list[str]]:
    """Every module of ``package`` outside ARTEFACT_JSON that reads an artefact-only key."""
    keys = artefact_only_keys()
    found = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel not in ARTEFACT_JSON and (reads := string_key_reads(path.read_text(), keys)):
            found[rel] = reads
    return found


def test_no_module_but_the_artefact_reader_and_writer_indexes_an_artefact_dict():
    assert {p for p in ARTEFACT_JSON if not (PACKAGE / p).is_file()} == set()  # no stale entry
    assert artefact_dict_reads(PACKAGE) == {}


def test_the_keys_tell_an_artefact_from_a_gold_set_or_a_config():
    keys = artefact_only_keys()
    assert {"summary", "shard", "history", "ranking", "first_gold_rank", "by_tag"} <= keys
    # gold-set and config keys the artefact also records say nothing on their own
    assert not {"questions", "question", "gold", "tags", "metrics", "k", "retriever"} & keys


def test_the_check_catches_a_planted_dict_read(tmp_path):
    package = tmp_path / "ci_eval"
    (package / "github").mkdir(parents=True)
    (package / "core").mkdir()
    (package / "github" / "planted.py").write_text(
        "def f(base, gold):\n"
        "    out = {}\n"
        '    out["summary"] = 1\n'  # building one is not reading one
        '    n = len(gold["questions"]) + len(gold.get("question", ""))\n'  # a gold set
        '    return base["summary"]["overall"], base.get("shard"), n\n')
    # the same read inside an allowed module is not reported
    allowed = package / "core/artefact/artefact.py"  # an ARTEFACT_JSON entry, wherever the core keeps it
    allowed.parent.mkdir(parents=True, exist_ok=True)
    allowed.write_text('def g(a):\n    return a["summary"]\n')
    found = artefact_dict_reads(package)
    assert list(found) == ["github/planted.py"]
    assert sorted(found["github/planted.py"]) == ["line 5: overall", "line 5: shard", "line 5: summary"]


def test_a_k_written_as_a_float_still_keeps_the_top_k():
    data = artefact([spec("q1", ["g"], at(1))])
    data["k"] = 5.0  # the schema's "integer" accepts it
    assert validate_artefact(json.loads(json.dumps(data)), "a.json") is not None
    assert read_artefact(data).depth == 5 and len(read_artefact(data).questions[0].top) == 5
