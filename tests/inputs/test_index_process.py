"""The user's index.callable in a process of its own (inputs/index_process.py): called once a
command for the same request, never remembered when it failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_eval.errors import InputError
from ci_eval.inputs.loaders import load_manifest

# Counts its calls in a file beside it; fails while a file named "down" is there.
INDEX = '''
from pathlib import Path

HERE = Path(__file__).parent


def ids(size=2):
    with open(HERE / "calls.txt", "a") as f:
        f.write("call\\n")
    if (HERE / "down").exists():
        raise ConnectionError("vector store unreachable")
    return {"version": "v1", "ids": [f"c{i}" for i in range(size)]}
'''


class Cfg:
    source = "ci-eval.toml"
    manifest = None
    index_version = None

    def __init__(self, folder: Path, tag: str, params: dict | None = None):
        self.manifest_callable = f"index_{tag}:ids"
        self.base_dir = str(folder)
        self.index_params = params or {}


def _project(tmp_path: Path, tag: str) -> Path:
    (tmp_path / f"index_{tag}.py").write_text(INDEX)
    return tmp_path


def calls(folder: Path) -> int:
    path = folder / "calls.txt"
    return len(path.read_text().split()) if path.exists() else 0


def test_the_same_request_twice_calls_the_index_once(tmp_path):
    # A unique module name a test: the replies are remembered for the life of the process.
    folder = _project(tmp_path, "once")
    first, second = load_manifest(Cfg(folder, "once")), load_manifest(Cfg(folder, "once"))
    assert first.ids == second.ids == frozenset({"c0", "c1"})
    assert calls(folder) == 1
    assert load_manifest(Cfg(folder, "once", {"size": 3})).ids == frozenset({"c0", "c1", "c2"})
    assert calls(folder) == 2  # other params: another index, called


def test_a_failed_call_is_not_remembered(tmp_path):
    folder = _project(tmp_path, "flaky")
    (folder / "down").write_text("")
    with pytest.raises(InputError, match="vector store unreachable"):
        load_manifest(Cfg(folder, "flaky"))
    (folder / "down").unlink()
    assert load_manifest(Cfg(folder, "flaky")).ids == frozenset({"c0", "c1"})
    assert calls(folder) == 2
