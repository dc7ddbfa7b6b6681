"""The index manifest model: entries, their checks, and today's id-only form."""

import pytest

from ci_eval.core.gold.fingerprint import text_hash
from ci_eval.core.gold.manifest import Chunk, build_index, index_from_document, parse_chunk
from ci_eval.errors import InputError, InputErrors


def test_todays_id_list_is_a_manifest_of_bare_chunks():
    idx = index_from_document({"version": "v1", "ids": ["a", "b", "a"]}, "m.json")
    assert idx.version == "v1" and idx.ids == {"a", "b"}
    assert idx.chunks["a"] == Chunk("a")


def test_rich_entries_carry_doc_span_and_hash():
    idx = index_from_document({"chunks": [
        {"id": "d#0", "doc": "d", "start": 0, "end": 5, "text": "hello  world"},
        {"id": "d#1", "doc": "d", "start": 5, "end": 9, "hash": text_hash("x")},
        "bare"]}, "m.json", version="from-config")
    assert idx.version == "from-config"
    assert idx.chunks["d#0"].hash == text_hash("hello world")
    assert idx.by_hash[text_hash("x")] == ["d#1"]
    assert [c.id for c in idx.by_doc["d"]] == ["d#0", "d#1"]


@pytest.mark.parametrize("entry, place, fragment", [
    (3, "chunks[0]", "expected a chunk id"),
    ({"doc": "d"}, "chunks[0].id", '"id" must be'),
    ({"id": "a", "colour": 1}, "chunks[0].colour", "unknown key"),
    ({"id": "a", "doc": "d", "start": 5}, "chunks[0].end", "whole number"),
    ({"id": "a", "doc": "d", "start": 5, "end": 2}, "chunks[0].end", "before"),
    ({"id": "a", "start": 0, "end": 2}, "chunks[0]", "needs the \"doc\""),
    ({"id": "a", "hash": "ABC"}, "chunks[0].hash", "64 lowercase hex"),
    ({"id": "a", "text": "x", "hash": text_hash("y")}, "chunks[0].hash", "is not the sha256"),
    ({"id": "a", "doc": "d", "start": True, "end": 3}, "chunks[0].start", "whole number"),
])
def test_bad_entries_name_their_place(entry, place, fragment):
    with pytest.raises(InputError) as exc:
        parse_chunk(entry, "m.json", "chunks[0]")
    assert exc.value.place == place and fragment in exc.value.message


def test_every_problem_is_reported_with_duplicates_named():
    with pytest.raises(InputErrors) as exc:
        build_index([(1, {"id": "a"}), (2, {"id": 3}), (3, {"id": "a"})], None, "m.jsonl")
    assert [(p.place, "twice" in p.message) for p in exc.value.problems] == [("line 2.id", False), ("line 3", True)]


def test_top_level_shape_is_checked():
    with pytest.raises(InputError, match="ids"):
        index_from_document({"ids": "a"}, "m.json")
    with pytest.raises(InputError, match="not both"):
        index_from_document({"ids": [], "chunks": []}, "m.json")
    with pytest.raises(InputError, match="must be a string"):
        index_from_document({"version": 3, "ids": []}, "m.json")


def test_the_published_schema_agrees_with_the_checks():
    import jsonschema

    from ci_eval.schemas import load

    schema = load("manifest")
    good = {"version": "v", "chunks": ["a", {"id": "b", "doc": "d", "start": 0, "end": 3, "hash": text_hash("x")}]}
    jsonschema.validate(good, schema)
    index_from_document(good, "m.json")
    for bad in ({"chunks": [{"id": "a", "start": 0, "end": 1}]}, {"chunks": [{"id": "a", "colour": 1}]},
                {"chunks": [{"id": "a", "hash": "ABC"}]}, {"ids": [3]}):
        assert not jsonschema.Draft202012Validator(schema).is_valid(bad)
        with pytest.raises(InputError):
            index_from_document(bad, "m.json")
