"""Every gold-set write keeps the file's layout: `ci-eval gold anchor` and `ci-eval gold
remap --write`, through the real CLI, change only the lines that carry what changed."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from projects import cli

from ci_eval.core.gold.goldformat import dumps_gold_set


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines a minimal line diff removes and adds (no "popular line" shortcuts: a gold
    set repeats lines such as "start": 0 hundreds of times)."""
    a, b = before.splitlines(), after.splitlines()
    removed, added = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            removed += a[i1:i2]
            added += b[j1:j2]
    return removed, added


def project(folder: Path, questions: int = 40) -> dict:
    text = {f"c{i}": f"chunk number {i} says something about topic {i} at length" for i in range(questions)}
    gold = {"schema_version": 1, "index_version": "v1", "questions": [
        {"id": f"q{i}", "question": f"question {i}?", "gold": {f"c{i}": 2}, "notes": "by hand"}
        for i in range(questions)]}
    (folder / "v1.jsonl").write_text("\n".join([json.dumps({"version": "v1"})] + [
        json.dumps({"id": cid, "doc": f"doc{cid}", "start": 0, "end": len(t), "text": t}) for cid, t in text.items()]))
    return gold


@pytest.mark.parametrize("indent", [2, 4, None])
def test_anchor_on_a_gold_set_in_another_layout_changes_only_what_it_adds(tmp_path, indent):
    gold = project(tmp_path)
    before = json.dumps(gold, indent=indent) + "\n"
    (tmp_path / "gold.json").write_text(before)
    done = cli("gold", "anchor", "--gold", "gold.json", "--manifest", "v1.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    after = (tmp_path / "gold.json").read_text()
    assert after != dumps_gold_set(json.loads(after))  # not rewritten in the house layout
    removed, added = changed_lines(before, after)
    if indent is None:  # one line: that line is the change
        assert len(removed) == 1
        return
    # schema_version 1 -> 2, and the closing bracket of "questions" gains a comma before
    # the new "anchors"; every question's lines are untouched.
    assert sorted(line.strip() for line in removed) == ['"schema_version": 1,', "]"]
    assert all(line.strip().startswith(("}", '"', "{", "]", '"schema_version": 2')) for line in added)
    assert not any('"question' in line or '"notes"' in line for line in added)
    anchors = json.loads(after)["anchors"]
    assert set(anchors) == {f"c{i}" for i in range(40)}
    # Written in the file's own indentation.
    step = " " * indent
    assert f'\n{step}"anchors": {{\n{step * 2}"c0": {{\n' in after


def test_remap_write_in_another_layout_changes_only_the_remapped_lines(tmp_path):
    gold = project(tmp_path)
    (tmp_path / "gold.json").write_text(json.dumps(gold, indent=2) + "\n")
    assert cli("gold", "anchor", "--gold", "gold.json", "--manifest", "v1.jsonl", cwd=tmp_path).returncode == 0
    before = (tmp_path / "gold.json").read_text()
    entries = [json.loads(line) for line in (tmp_path / "v1.jsonl").read_text().splitlines()[1:]]
    entries[5]["id"] = "renamed5"  # one chunk renamed, its text the same
    (tmp_path / "v2.jsonl").write_text("\n".join([json.dumps({"version": "v2"})] + list(map(json.dumps, entries))))
    done = cli("gold", "remap", "--gold", "gold.json", "--manifest", "v2.jsonl", "--write", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    removed, added = changed_lines(before, (tmp_path / "gold.json").read_text())
    # The renamed id where the question names it, its anchor (moved to the new id, after
    # the others), the index version, and the provenance the remap appends: nothing else.
    block = before.split('\n    "c5": {\n', 1)[1].split("\n    }", 1)[0].splitlines()
    allowed = {'"index_version": "v1",', '"c5": 2', '"c5": {', "},"} | {line.strip() for line in block}
    assert {line.strip() for line in removed} <= allowed
    assert len(removed) == 3 + len(block) + 1
    assert any('"renamed5": 2' in line for line in added) and any('"renamed5": {' in line for line in added)
    assert not any('"question' in line or '"notes"' in line for line in removed + added)
