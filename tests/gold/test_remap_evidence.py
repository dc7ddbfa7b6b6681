"""`ci-eval gold remap` writes only what the text proves, through the real CLI: a span whose
text moved is not taken, confidence stays in [0, 1], and a person's grade on a live id is
never overwritten."""

from __future__ import annotations

import json
import re
from pathlib import Path

from projects import cli

P1 = "Wings make lift when the air over them moves faster than the air under them."
P2 = "Drag slows the plane down and it grows with the square of the speed of flight."


def write_manifest(path: Path, version: str, chunks) -> Path:
    lines = [json.dumps({"version": version})]
    lines += [json.dumps({"id": cid, "doc": doc, "start": start, "end": start + len(text), "text": text})
              for cid, doc, start, text in chunks]
    path.write_text("\n".join(lines) + "\n")
    return path


def anchored(folder: Path, gold: list[dict], chunks) -> None:
    (folder / "gold.json").write_text(json.dumps({"schema_version": 1, "index_version": "v1", "questions": gold}))
    write_manifest(folder / "v1.jsonl", "v1", chunks)
    done = cli("gold", "anchor", "--gold", "gold.json", "--manifest", "v1.jsonl", cwd=folder)
    assert done.returncode == 0, done.stderr


def rows(table: str) -> dict[str, list[str]]:
    """The dry run's table: stale id -> [new ids, kind, how, confidence]."""
    out = {}
    for line in table.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) == 5 and cells[0] != "stale id" and not set(cells[0]) <= {"-"}:
            out[cells[0]] = cells[1:]
    return out


def test_a_span_whose_text_moved_is_never_written_the_text_is_read_where_it_went(tmp_path):
    # a = p1, b = p2; the new index has p2 first (at a's old offsets) and p1 after it, p1
    # lightly cleaned, so no hash matches and a's old span points at p2.
    anchored(tmp_path, [{"id": "q1", "question": "What makes lift?", "gold": {"a": 2}}],
             [("a", "aero", 0, P1), ("b", "aero", len(P1) + 1, P2)])
    cleaned = P1.replace("Wings", "Wing")
    write_manifest(tmp_path / "v2.jsonl", "v2", [("n1", "aero", 0, P2), ("n2", "aero", len(P2) + 1, cleaned)])
    before = (tmp_path / "gold.json").read_bytes()
    dry = cli("gold", "remap", "--gold", "gold.json", "--manifest", "v2.jsonl", cwd=tmp_path)
    # The text of a is in n2, not in n1 that its old span covers: reading it word by word in
    # the new document finds it there, one word mended, so n2 is written and never n1.
    assert rows(dry.stdout)["a"][:2] == ["n2", "automatic"], dry.stdout
    assert (tmp_path / "gold.json").read_bytes() == before  # a dry run writes nothing
    done = cli("gold", "remap", "--gold", "gold.json", "--manifest", "v2.jsonl", "--write", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert json.loads((tmp_path / "gold.json").read_text())["questions"][0]["gold"] == {"n2": 2}


def test_confidence_stays_within_0_and_1_with_overlapping_chunks(tmp_path):
    words = [f"word{i}" for i in range(60)]
    anchored(tmp_path, [{"id": "q1", "question": "Which words?", "gold": ["d#0"]}], [("d#0", "d", 0, " ".join(words))])
    # Re-cut into two 40-word windows overlapping by 20, one word edited so the old text is
    # nowhere verbatim: each window holds two thirds of the old span.
    edited = [w if i != 50 else "changed" for i, w in enumerate(words)]
    offsets = [0]
    for w in edited:
        offsets.append(offsets[-1] + len(w) + 1)
    write_manifest(tmp_path / "v2.jsonl", "v2", [(f"w{s}", "d", offsets[s], " ".join(edited[s:s + 40])) for s in (0, 20)])
    dry = cli("gold", "remap", "--gold", "gold.json", "--manifest", "v2.jsonl", cwd=tmp_path)
    (row,) = rows(dry.stdout).values()
    assert row[0] == "w0, w20", dry.stdout
    assert 0.0 <= float(row[3]) <= 1.0, dry.stdout


def test_a_grade_on_a_live_id_is_a_collision_not_overwritten(tmp_path):
    anchored(tmp_path, [{"id": "q1", "question": "What makes lift?", "gold": {"a": 3, "n1": 0}}],
             [("a", "aero", 0, P1), ("n1", "aero", len(P1) + 1, P2)])
    # The re-ingestion gives a's text, unchanged, the id n1, which the question already
    # grades 0 (a person's judgement of what n1 named before), and n1's old text is gone: no
    # evidence says where that 0 should go, so it stays on n1 and the two grades collide.
    write_manifest(tmp_path / "v2.jsonl", "v2", [("n1", "aero", 0, P1)])
    before = (tmp_path / "gold.json").read_bytes()
    done = cli("gold", "remap", "--gold", "gold.json", "--manifest", "v2.jsonl", "--write", cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    assert (tmp_path / "gold.json").read_bytes() == before
    assert rows(done.stdout)["a"][:2] == ["n1", "proposed"]
    assert "question 'q1': a (grade 3) -> n1, which it already grades 0" in done.stdout

    accepted = cli("gold", "remap", "--gold", "gold.json", "--manifest", "v2.jsonl", "--write",
                   "--accept-proposals", cwd=tmp_path)
    # Accepting proposals does not settle a collision: both grades stay for a person, exit 1.
    assert accepted.returncode == 1, accepted.stdout
    assert json.loads((tmp_path / "gold.json").read_text())["questions"][0]["gold"] == {"a": 3, "n1": 0}


def test_a_live_id_whose_text_moved_on_is_remapped_with_its_own_grade(tmp_path):
    # a = p1 and n1 = p2; the re-ingestion gives p1 the id n1 and p2 the id n9. n1 still
    # exists but names other text (drifted), so both grades follow their text: no collision.
    anchored(tmp_path, [{"id": "q1", "question": "What makes lift?", "gold": {"a": 3, "n1": 0}}],
             [("a", "aero", 0, P1), ("n1", "aero", len(P1) + 1, P2)])
    write_manifest(tmp_path / "v2.jsonl", "v2", [("n1", "aero", 0, P1), ("n9", "aero", len(P1) + 1, P2)])
    done = cli("gold", "remap", "--gold", "gold.json", "--manifest", "v2.jsonl", "--write", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert json.loads((tmp_path / "gold.json").read_text())["questions"][0]["gold"] == {"n1": 3, "n9": 0}
