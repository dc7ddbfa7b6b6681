import json

import pytest

from ci_eval.core.answers import AnswersSpec
from ci_eval.errors import InputError, InputErrors
from ci_eval.inputs.answers import load_answers
from ci_eval.inputs.artefact_file import read_run
from ci_eval.inputs.loaders import load_manifest


class Cfg:
    source = "ci-eval.toml"
    manifest_callable = None
    index_version = None
    base_dir = ""
    index_params: dict = {}  # noqa: RUF012 - read only

    def __init__(self, manifest=None, callable_=None, version=None):
        self.manifest = manifest
        self.manifest_callable = callable_
        self.index_version = version


def test_manifest_json_and_lines(tmp_path):
    j = tmp_path / "m.json"
    j.write_text(json.dumps({"version": "v2", "ids": ["a", "b"]}))
    m = load_manifest(Cfg(str(j)))
    assert (m.version, m.ids, m.source) == ("v2", frozenset({"a", "b"}), str(j))
    t = tmp_path / "m.txt"
    t.write_text("# ids of index v3\na\n\nb\n")
    m = load_manifest(Cfg(str(t), version="v3"))
    assert m.ids == frozenset({"a", "b"}) and m.version == "v3"


def test_manifest_callable():
    m = load_manifest(Cfg(callable_="fake_retrievers:manifest"))
    assert m.version == "idx-2" and "alpha" in m.ids


def test_no_manifest_means_not_checked():
    assert load_manifest(Cfg()) is None


@pytest.mark.parametrize(
    "text, place",
    [('{"version": "v", "ids": "a"}', "ids"), ('{"version": 3, "ids": []}', "version"), ('{"ids": [1]}', "ids[0]")],
)
def test_bad_manifests_name_the_place(tmp_path, text, place):
    p = tmp_path / "m.json"
    p.write_text(text)
    with pytest.raises(InputError) as info:
        load_manifest(Cfg(str(p)))
    assert info.value.place == place and info.value.source == str(p)


class _Q:
    def __init__(self, qid: str, text: str = ""):
        self.id, self.question = qid, text or f"text of {qid}"


def test_answers(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"id": "q1", "correct": true}\n\n{"id": "q2", "correct": false}\n')
    verdicts, record = load_answers(AnswersSpec("jsonl", str(p), "a.jsonl"), [_Q("q1"), _Q("q2")])
    assert verdicts == {"q1": True, "q2": False}
    assert (record["rows"], record["matched"], record["missing"]["count"]) == (2, 2, 0)


def test_answers_report_every_bad_line(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"id": "q1", "correct": "yes"}\nnope\n{"id": "q9"}\n')
    with pytest.raises(InputErrors) as info:
        load_answers(AnswersSpec("jsonl", str(p)), [_Q("q1")])
    assert [e.place for e in info.value.problems] == ["line 1", "line 2 column 1", "line 3"]
    assert info.value.problems[2].message == '"correct" must be true or false'


def test_artefact_newer_schema_is_refused_plainly(tmp_path):
    p = tmp_path / "base.json"
    p.write_text(json.dumps({"schema_version": 7}))
    with pytest.raises(InputError, match="newer than this ci-eval reads.*upgrade ci-eval"):
        read_run(p)


def test_artefact_size_cap(tmp_path):
    p = tmp_path / "base.json"
    p.write_text(" " * 2000)
    with pytest.raises(InputError, match="over the 1,000-byte limit"):
        read_run(p, max_bytes=1000)
