import os

import pytest

from ci_eval.errors import InputError
from ci_eval.inputs.files import atomic_append, atomic_write, read_json, read_toml


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "out" / "run.json"
    atomic_write(target, "first")
    atomic_write(target, "second")
    assert target.read_text() == "second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["run.json"]


def test_interrupted_write_leaves_the_previous_file_and_no_debris(tmp_path, monkeypatch):
    target = tmp_path / "run.json"
    target.write_text("previous")

    def interrupted(src, dst):
        raise KeyboardInterrupt  # the run is stopped between writing and renaming

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "x" * 100_000)
    assert target.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_interrupted_first_write_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        atomic_write(tmp_path / "new.json", "data")
    assert list(tmp_path.iterdir()) == []


def test_atomic_append_keeps_what_other_steps_wrote(tmp_path):
    out = tmp_path / "GITHUB_OUTPUT"
    out.write_text("earlier=1\n")
    atomic_append(out, "ours=2\n")
    assert out.read_text() == "earlier=1\nours=2\n"


@pytest.mark.parametrize(
    "raw, fragment, place",
    [
        (b'{"a": 1,\n "b": }', "invalid JSON", "line 2 column 7"),
        (b'{"a": NaN}', "NaN is not allowed", "a"),
        (b'\xff\xfe{}', "not valid UTF-8", "line 1"),
    ],
)
def test_read_json_errors(tmp_path, raw, fragment, place):
    p = tmp_path / "g.json"
    p.write_bytes(raw)
    with pytest.raises(InputError) as info:
        read_json(p, "gold set")
    assert fragment in info.value.message and info.value.place == place and info.value.source == str(p)


def test_bom_is_tolerated(tmp_path):
    p = tmp_path / "g.json"
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_json(p, "gold set")[0] == {"a": 1}


def test_missing_and_folder(tmp_path):
    with pytest.raises(InputError, match="gold set not found"):
        read_json(tmp_path / "nope.json", "gold set")
    with pytest.raises(InputError, match="is a folder"):
        read_toml(tmp_path, "config file")
