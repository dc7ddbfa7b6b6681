"""A part checked by one pass over its lines: the same typed part as the full parse gives,
the line pass taken for what the writer writes, and every refusal still the full parse's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shard_helpers import run_to, write_project

from ci_eval.core.artefact.shard import Shard, shard_of
from ci_eval.errors import InputError
from ci_eval.inputs import artefact_stream
from ci_eval.inputs.artefact_stream import checked_data, part_of_data, read_part, read_rankings

GOLD = [{"id": f"q{n}", "question": f"{['alpha', 'beta', 'gamma'][n % 3]} question {n}",
         "gold": [["alpha", "beta", "gamma"][n % 3]], "tags": ["how-to"]} for n in range(12)]


@pytest.fixture(scope="module")
def part(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    config = write_project(root, GOLD, target="lexical")
    return run_to(config, root / "part-1.json", shard=Shard(1, 2))


def full_parse(path: Path):
    return part_of_data(str(path), checked_data(path.read_bytes(), str(path)))


def test_a_written_part_is_read_by_the_line_pass_as_the_full_parse_reads_it(part):
    streamed = artefact_stream._streamed(part, str(part), 1 << 30)
    assert streamed is not None  # the writer's layout: no fallback
    assert streamed == full_parse(part) == read_part(part)
    expected = [q["id"] for q in GOLD if shard_of(q["id"], 2) == 1]
    assert streamed.ids == expected == streamed.head.shard.ids
    assert streamed.head.shard.label == "1/2" and streamed.head.metrics[0] == "hit@1"


def test_another_layout_of_the_same_content_reads_the_same(part, tmp_path):
    other = tmp_path / "indented.json"
    other.write_text(json.dumps(json.loads(part.read_text()), indent=2))
    assert artefact_stream._streamed(other, str(other), 1 << 30) is None
    assert read_part(other, source=str(part)) == read_part(part)


def _planted(part: Path, tmp_path: Path, old: str, new: str) -> Path:
    text = part.read_text()
    assert old in text
    bad = tmp_path / "bad.json"
    bad.write_text(text.replace(old, new, 1))
    return bad


def test_a_bad_row_steps_aside_and_the_full_parse_names_its_place(part, tmp_path):
    rows = [line for line in part.read_text().splitlines() if line.startswith("  [")]
    first = json.loads(rows[0].rstrip(","))
    bad = _planted(part, tmp_path, f'"{first[4]}"', '"finished"')  # not a status
    assert artefact_stream._streamed(bad, str(bad), 1 << 30) is None
    with pytest.raises(InputError) as refused:
        read_part(bad, source="artifact p (id 1):ci-eval-run.json")
    assert refused.value.source == "artifact p (id 1):ci-eval-run.json"
    assert "questions[0].status" in str(refused.value)


def test_a_repeated_question_id_is_refused(part, tmp_path):
    rows = [json.loads(line.rstrip(",")) for line in part.read_text().splitlines() if line.startswith("  [")]
    bad = _planted(part, tmp_path, f'["{rows[1][0]}",', f'["{rows[0][0]}",')
    with pytest.raises(InputError, match="appears 2 times"):
        read_part(bad)


def test_a_part_past_the_size_limit_is_refused_before_it_is_read(part):
    with pytest.raises(InputError, match="over the 100-byte limit") as refused:
        read_part(part, max_bytes=100, source="part one")
    assert refused.value.source == "part one"


def test_the_whole_rankings_are_read_for_the_labelling_pool(part):
    rankings = read_rankings(part.read_bytes(), str(part))
    rows = [json.loads(line.rstrip(",")) for line in part.read_text().splitlines() if line.startswith("  [")]
    assert rankings == {row[0]: [cid for cid, _ in row[-1]] for row in rows}


@pytest.mark.parametrize("kind", ["folder", "fifo", "missing"])
def test_a_part_that_is_not_a_file_is_refused_in_one_line(tmp_path, kind):
    import os

    path = tmp_path / "part.json"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # opened without blocking: no writer is waited for
    with pytest.raises(InputError) as refused:
        read_part(path)
    assert refused.value.source == str(path)
    assert {"folder": "is a folder", "fifo": "is a FIFO", "missing": "not found"}[kind] in str(refused.value)
