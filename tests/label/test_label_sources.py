import json

import pytest
from factories import artefact, spec

from ci_eval.errors import InputError
from ci_eval.label.sources import MAX_TEXT, rankings_from_file, read_candidates, text_lookup


def test_pool_rankings_from_an_artefact_and_from_a_trec_run(tmp_path):
    art = tmp_path / "head.json"
    from ci_eval.core.artefact.artefact import dumps

    art.write_text(dumps(artefact([spec("q1", ["a"], ["b", "a"]), spec("q2", ["c"], [])])))
    assert rankings_from_file(str(art)) == {"q1": ["b", "a"], "q2": []}
    from factories import as_v2

    art.write_text(dumps(as_v2(artefact([spec("q1", ["a"], ["b", "a"]), spec("q2", ["c"], [])]))))
    assert rankings_from_file(str(art)) == {"q1": ["b", "a"], "q2": []}  # version 2 too
    run = tmp_path / "run.trec"
    # File order is not rank order: trec_eval's order is score descending, then id descending.
    run.write_text("q1 Q0 a 1 1.0 r\nq1 Q0 c 2 3.0 r\nq1 Q0 b 3 1.0 r\n")
    assert rankings_from_file(str(run)) == {"q1": ["c", "b", "a"]}


def test_texts_from_a_jsonl_file_a_callable_and_the_manifest(tmp_path):
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(json.dumps({"id": "a", "text": "A" * (MAX_TEXT + 5)}) + "\n\n" + json.dumps({"id": "b", "text": "B"}))
    got = text_lookup(str(chunks), None)(["a", "b", "zz"])
    assert got["b"] == "B" and len(got["a"]) == MAX_TEXT and "zz" not in got
    from ci_eval.demo.corpus import load_chunks

    first = load_chunks()[0]
    assert text_lookup("ci_eval.demo.retriever:texts", None)([first.id, "zz"]) == {
        first.id: f"{first.title}\n\n{first.text}"}

    class Config:
        manifest_callable = None
        manifest = str(tmp_path / "index.json")
        source = "ci-eval.toml"

    (tmp_path / "index.json").write_text(json.dumps({"ids": ["a"], "text": {"a": "alpha"}}))
    assert text_lookup(None, Config)(["a"]) == {"a": "alpha"}
    (tmp_path / "index.json").write_text(json.dumps({"ids": ["a"]}))
    with pytest.raises(InputError, match="no chunk text"):
        text_lookup(None, Config)


def test_candidates_lines_are_questions(tmp_path):
    path = tmp_path / "mined.jsonl"
    path.write_text('{"question": "  how   now?"}\n{"question": 3}\n')
    with pytest.raises(InputError) as info:
        read_candidates(str(path))
    assert str(info.value).startswith(f"{path}:line 2:")
    path.write_text('{"question": "  how   now?"}\n')
    assert read_candidates(str(path)) == ["how now?"]


def test_places_travel_with_the_texts_when_the_source_gives_them(tmp_path):
    from ci_eval.label.sources import NO_PLACE_CALLABLE, NO_PLACE_FILE, Place

    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text("\n".join(json.dumps(x) for x in [
        {"id": "a", "text": "alpha", "doc": "d.md", "start": 7},
        {"id": "b", "text": "beta", "doc": "d.md", "start": 20, "end": 30},
        {"id": "c", "text": "gamma"}]))
    got = text_lookup(str(chunks), None)(["a", "b", "c"])
    assert got == {"a": "alpha", "b": "beta", "c": "gamma"}
    assert got.places == {"a": Place("d.md", 7, 5), "b": "its span 20..30 is not as long as its text (4 characters)",
                          "c": NO_PLACE_FILE}
    demo = text_lookup("ci_eval.demo.retriever:texts", None)
    from ci_eval.demo.corpus import load_chunks

    assert demo([load_chunks()[0].id]).places == {load_chunks()[0].id: NO_PLACE_CALLABLE}

    class Config:
        manifest_callable = None
        manifest = str(tmp_path / "index.json")
        source = "ci-eval.toml"

    (tmp_path / "index.json").write_text(json.dumps({"version": "v", "chunks": [
        {"id": "a", "doc": "d.md", "start": 3, "end": 8, "text": "alpha"}, {"id": "b", "text": "beta"}]}))
    got = text_lookup(None, Config)(["a", "b"])
    assert got == {"a": "alpha", "b": "beta"}
    assert got.places["a"] == Place("d.md", 3, 5) and "no \"doc\" and \"start\"" in got.places["b"]
