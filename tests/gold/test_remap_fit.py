"""`ci-eval gold remap` refuses a manifest the gold set does not fit (exit 2, the reason,
nothing written), through the real CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from projects import cli

P1 = "Wings make lift when air flows over them faster than under them."
P2 = "Drag slows the plane and grows with the square of its speed."


def manifest(path: Path, version: str | None, chunks: dict[str, str]) -> Path:
    head = [json.dumps({"version": version})] if version is not None else []
    path.write_text("\n".join([*head, *(json.dumps({"id": cid, "doc": "aero", "text": text})
                                        for cid, text in chunks.items())]) + "\n")
    return path


def anchored_gold(folder: Path) -> Path:
    gold = folder / "gold.json"
    gold.write_text(json.dumps({"schema_version": 1, "index_version": "v1", "questions": [
        {"id": "q1", "question": "What makes lift?", "gold": {"a": 2}},
        {"id": "q2", "question": "What slows a plane?", "gold": {"b": 1}}]}))
    manifest(folder / "v1.jsonl", "v1", {"a": P1, "b": P2})
    done = cli("gold", "anchor", "--gold", "gold.json", "--manifest", "v1.jsonl", cwd=folder)
    assert done.returncode == 0, done.stderr
    return gold


def refused(folder: Path, *args: str):
    before = (folder / "gold.json").read_bytes()
    done = cli("gold", "remap", "--gold", "gold.json", *args, "--write", cwd=folder)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert (folder / "gold.json").read_bytes() == before
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    return done.stderr


def test_the_gold_sets_own_version_without_its_ids_is_refused(tmp_path):
    anchored_gold(tmp_path)
    manifest(tmp_path / "other.jsonl", "v1", {"n1": P1, "n2": P2})
    err = refused(tmp_path, "--manifest", "other.jsonl")
    assert "other.jsonl: the manifest is version 'v1', the gold set's own, yet lacks 2 of its ids (first: 'a')" in err


def test_the_index_a_gold_set_was_remapped_from_is_refused(tmp_path):
    anchored_gold(tmp_path)
    manifest(tmp_path / "v2.jsonl", "v2", {"n1": P1, "n2": P2})
    done = cli("gold", "remap", "--gold", "gold.json", "--manifest", "v2.jsonl", "--write", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "gold.json").read_text())["index_version"] == "v2"
    err = refused(tmp_path, "--manifest", "v1.jsonl")
    assert "v1.jsonl: the gold set was remapped from index 'v1' to 'v2'" in err


def test_a_manifest_without_a_version_needs_to_version(tmp_path):
    anchored_gold(tmp_path)
    manifest(tmp_path / "bare.jsonl", None, {"n1": P1, "n2": P2})
    err = refused(tmp_path, "--manifest", "bare.jsonl")
    assert "bare.jsonl: the manifest names no version and the gold set is for index 'v1'" in err
    assert "--to-version" in err

    done = cli("gold", "remap", "--gold", "gold.json", "--manifest", "bare.jsonl", "--to-version", "v2",
               "--write", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads((tmp_path / "gold.json").read_text())
    assert out["index_version"] == "v2"
    assert out["provenance"]["remaps"][0]["to_index_version"] == "v2"
    assert [q["gold"] for q in out["questions"]] == [{"n1": 2}, {"n2": 1}]


def test_to_version_that_contradicts_the_manifest_is_refused(tmp_path):
    anchored_gold(tmp_path)
    manifest(tmp_path / "v2.jsonl", "v2", {"n1": P1, "n2": P2})
    err = refused(tmp_path, "--manifest", "v2.jsonl", "--to-version", "v3")
    assert "v2.jsonl: --to-version 'v3', but the manifest says version 'v2'" in err
