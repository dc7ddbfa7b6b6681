"""Index manifest files: JSON lines streamed, JSON documents, one id per line."""

import json

import pytest

from ci_eval.core.gold.fingerprint import text_hash
from ci_eval.errors import InputError
from ci_eval.inputs.manifest import read_manifest


def test_json_lines_with_a_header_and_blank_lines(tmp_path):
    path = tmp_path / "index.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"version": "v9"}\n\n{"id": "a", "doc": "d", "start": 0, "end": 3, "text": "abc"}\n"b"\n')
    idx = read_manifest(path, version="from-config")
    assert idx.version == "v9" and idx.ids == {"a", "b"}
    assert idx.chunks["a"].hash == text_hash("abc")


def test_json_lines_without_a_header_take_the_configured_version(tmp_path):
    path = tmp_path / "index.ndjson"
    path.write_text(json.dumps({"id": "a"}) + "\n")
    assert read_manifest(path, version="cfg").version == "cfg"


def test_json_and_plain_lines_still_read(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({"version": "v1", "chunks": [{"id": "a", "hash": text_hash("x")}]}))
    assert read_manifest(tmp_path / "m.json").chunks["a"].hash == text_hash("x")
    (tmp_path / "m.txt").write_text("# ids\na\n\nb\na\n")
    assert read_manifest(tmp_path / "m.txt").ids == {"a", "b"}


@pytest.mark.parametrize("name, content, place", [
    ("m.jsonl", '{"id": "a"}\n{"id": NaN}\n', "line 2"),
    ("m.jsonl", '{"id": "a"}\n{"version": "late"}\n', "line 2"),
    ("m.jsonl", '{"version": 3}\n', "line 1"),
])
def test_bad_lines_name_their_line(tmp_path, name, content, place):
    (tmp_path / name).write_text(content)
    with pytest.raises(InputError) as exc:
        read_manifest(tmp_path / name)
    assert exc.value.place == place


def test_a_missing_or_folder_manifest_is_one_clear_error(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_manifest(tmp_path / "absent.jsonl")
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(InputError, match="folder"):
        read_manifest(tmp_path / "dir.jsonl")
