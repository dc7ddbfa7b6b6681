"""`ci-eval run --shard` and `ci-eval merge` as real processes: the merged artefact is the
unsharded run's, byte for byte apart from times and latencies, and every way parts can fail
to be one run is refused with exit 2 and one line naming the part."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from run_files import read_run
from shard_helpers import without_times
from suite_paths import SUPPORT

from ci_eval.core.artefact.shard import shard_of

WORDS = ["alpha", "beta", "gamma", "delta", "zeta", "boom"]
COUNT = 3


def cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(SUPPORT), "GITHUB_SHA": "ab" * 20, "GITHUB_REF": "refs/heads/main"}
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def questions() -> list[dict]:
    out = [{"id": f"q{n:02d}", "question": f"{WORDS[n % len(WORDS)]} question {n}",
            "gold": {WORDS[(n * 5) % 4]: 1 + n % 2, "retired": 1} if n % 4 == 0 else [WORDS[(n * 5) % 4]],
            "tags": [["api", "how-to"][n % 2]]} for n in range(30)]
    out.append({"id": "u1", "question": "nothing about omega", "gold": [], "unanswerable": True})
    return out


def write(root: Path, gold: list[dict], k: int = 1, version: str = "idx-2") -> None:
    (root / "gold.json").write_text(json.dumps({"schema_version": 1, "index_version": "idx-2", "questions": gold}))
    (root / "index.json").write_text(json.dumps({"version": version,
                                                 "ids": ["alpha", "beta", "gamma", "delta", "epsilon"]}))
    (root / "ci-eval.toml").write_text(
        f'gold_set = "gold.json"\nk = {k}\nabstain_below = 0.9\n[retriever]\ntype = "python"\n'
        'target = "fake_retrievers:failing"\n[index]\nmanifest = "index.json"\n')


def run_part(root: Path, index: int, out: str, count: int = COUNT) -> Path:
    done = cli("run", "--quiet", "--shard", f"{index}/{count}", "--out", out, cwd=root)
    assert done.returncode in (0, 4), done.stderr  # 4: the "boom" questions fail by design
    return root / out


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    write(root, questions())
    for i in range(1, COUNT + 1):
        run_part(root, i, f"part-{i}.json")
    return root


PARTS = [f"part-{i}.json" for i in range(1, COUNT + 1)]


def test_merged_parts_equal_the_unsharded_run_byte_for_byte_apart_from_times(project):
    whole = cli("run", "--quiet", "--out", "whole.json", cwd=project)
    merged = cli("merge", *reversed(PARTS), "--out", "merged.json", cwd=project)
    # The "boom" questions fail in both: the merge exits 4 as the run does.
    assert whole.returncode == merged.returncode == 4, (whole.stderr, merged.stderr)
    a = read_run(project / "whole.json")
    b = read_run(project / "merged.json")
    assert without_times(a) == without_times(b)
    assert "shard" not in b and [q["id"] for q in b["questions"]] == [q["id"] for q in questions()]
    # Latency percentiles come from the rows, not from the parts' own summaries.
    latencies = sorted(q["latency_ms"] for q in b["questions"])
    assert b["summary"]["latency_ms"]["p50"] == latencies[(len(latencies) + 1) // 2 - 1]
    sizes = [len(read_run(project / p)["questions"]) for p in PARTS]
    assert sum(sizes) == len(questions()) and all(sizes)


def test_a_missing_shard_is_refused_naming_it(project):
    done = cli("merge", PARTS[0], PARTS[2], "--out", "m.json", cwd=project)
    assert done.returncode == 2 and not (project / "m.json").exists()
    assert done.stderr.strip().splitlines() == [
        f"ci-eval: error: shard 2/{COUNT} is missing: the merge needs all {COUNT} parts of the run, "
        f"got 2 ({PARTS[0]}, {PARTS[2]})"]


def test_a_duplicate_shard_is_refused(project):
    (project / "copy.json").write_bytes((project / PARTS[1]).read_bytes())
    done = cli("merge", *PARTS, "copy.json", "--out", "m.json", cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip() == f"ci-eval: error: copy.json: shard 2/{COUNT} is given twice (also {PARTS[1]})"


def test_a_question_in_two_parts_is_refused(project):
    one, two = (read_run(project / p) for p in PARTS[:2])
    moved = one["questions"][0]
    two["questions"].append(moved)
    two["shard"]["ids"].append(moved["id"])
    two["shard"]["positions"].append(one["shard"]["positions"][0])
    (project / "edited.json").write_text(json.dumps(two))
    done = cli("merge", PARTS[0], "edited.json", PARTS[2], "--out", "m.json", cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"ci-eval: error: edited.json:shard.ids: question {moved['id']!r} "
                                   f"is also in {PARTS[0]}")


@pytest.mark.parametrize("change, says", [
    ("gold", "comes from a different gold than part-1.json"),
    ("config", "comes from a different config than part-1.json"),
    ("index", "comes from a different index version than part-1.json ('idx-3' vs 'idx-2')"),
    ("count", "is shard 2/4, but part-1.json is one of 3"),
])
def test_parts_of_different_runs_are_refused(project, tmp_path, change, says):
    # The odd part is made by a real run of a changed project, not by editing a file.
    other = tmp_path / "other"
    other.mkdir()
    gold = questions()
    gold[0] = {**gold[0], "question": gold[0]["question"] + " reworded"}
    write(other, gold if change == "gold" else questions(), k=2 if change == "config" else 1,
          version="idx-3" if change == "index" else "idx-2")
    odd = run_part(other, 2, "odd.json", count=4 if change == "count" else COUNT)
    done = cli("merge", PARTS[0], str(odd), PARTS[2], "--out", "m.json", cwd=project)
    assert done.returncode == 2
    line, = done.stderr.strip().splitlines()
    assert line.startswith(f"ci-eval: error: {odd}:shard.") and says in line


def test_an_unsharded_artefact_is_not_a_part(project):
    cli("run", "--quiet", "--out", "plain.json", cwd=project)
    done = cli("merge", "plain.json", "--out", "m.json", cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip() == ("ci-eval: error: plain.json: is not a shard part "
                                   "(write parts with `ci-eval run --shard I/N`)")


def test_a_gold_set_given_as_a_part_is_one_line_naming_it(project):
    # the schema would list every key a gold set lacks and every row it cannot read
    done = cli("merge", "gold.json", *PARTS[1:], "--out", "m.json", cwd=project)
    assert done.returncode == 2
    line, = done.stderr.strip().splitlines()
    assert line.startswith("ci-eval: error: gold.json: not a run artefact")
    assert not (project / "m.json").exists()


def test_a_part_whose_question_hashes_elsewhere_is_refused(project):
    part = read_run(project / PARTS[0])
    stranger = next(f"x{n}" for n in range(100) if shard_of(f"x{n}", COUNT) != 1)
    part["questions"][0]["id"] = part["shard"]["ids"][0] = stranger
    (project / "stray.json").write_text(json.dumps(part))
    done = cli("merge", "stray.json", *PARTS[1:], "--out", "m.json", cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"ci-eval: error: stray.json:shard.ids: question {stranger!r} "
                                   f"does not belong to shard 1/{COUNT}")


def test_out_never_overwrites_a_part(project):
    before = (project / PARTS[0]).read_bytes()
    done = cli("merge", *PARTS, "--out", PARTS[0], cwd=project)
    assert done.returncode == 2 and (project / PARTS[0]).read_bytes() == before
    assert done.stderr.strip() == f"ci-eval: error: --out: would overwrite the part {PARTS[0]}"


def test_a_shard_run_says_what_it_holds(project, tmp_path):
    done = cli("run", "--shard", f"1/{COUNT}", "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "p.json"),
               cwd=project)
    part = read_run(tmp_path / "p.json")
    held = len(part["questions"])
    assert f"shard 1/{COUNT}: {held} of {len(questions())} questions; merge the parts with `ci-eval merge`" in done.stdout
    assert f"retrieval cache: 0 answered from it, {held} asked" in done.stdout


def _edited(project, name: str, edit) -> tuple[str, str]:
    """The first part with one of its ok rows changed by ``edit`` (which returns the field
    it changed), written as ``name``; (the question's id, the field)."""
    part = read_run(project / PARTS[0])
    for q in part["questions"]:
        if q["status"] == "ok":
            field = edit(q)
            if field:
                break
    else:
        pytest.fail("no ok row that edit changes")
    (project / name).write_text(json.dumps(part))
    return q["id"], field


def _all_ones(q):
    if any(v < 1 for v in q["metrics"].values()):
        q["metrics"] = dict.fromkeys(q["metrics"], 1)
        return "metrics"
    return None


def _gold_first(q):
    if q["first_gold_rank"] != 1:
        q["first_gold_rank"] = 1
        return "first_gold_rank"
    return None


def _made_stale(q):
    q["status"] = "stale"
    return "status"


@pytest.mark.parametrize("edit", [_all_ones, _gold_first, _made_stale], ids=lambda f: f.__name__)
def test_a_hand_edited_row_is_refused_naming_the_part_and_question(project, edit):
    qid, field = _edited(project, "edited.json", edit)
    done = cli("merge", "edited.json", *PARTS[1:], "--out", "m.json", cwd=project)
    assert done.returncode == 2 and not (project / "m.json").exists()
    line, = done.stderr.strip().splitlines()
    assert line.startswith("ci-eval: error: edited.json:questions[") and f".{field}: question {qid!r}: " in line
    assert "but its gold and ranking give" in line


def test_an_untouched_part_written_again_still_merges(project):
    # the same rows re-encoded by another writer: the check is on values, not on bytes
    (project / "same.json").write_text(json.dumps(read_run(project / PARTS[0])))
    done = cli("merge", "same.json", *PARTS[1:], "--out", "m.json", cwd=project)
    assert done.returncode == 4, done.stderr  # the "boom" questions fail by design
