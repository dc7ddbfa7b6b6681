"""core/artefact/shard.py: the I/N spelling, the assignment by hash of the id, and (property) that
the shards of any gold set partition it and merge back into the unsharded run."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shard_helpers import merge_in_process, read_run, run_in_process, run_to, without_times, write_project

from ci_eval.core.artefact.shard import Shard, parse_shard, select, shard_of
from ci_eval.core.gold.goldset import parse_gold_set
from ci_eval.errors import InputError


def test_parse_shard_spelling():
    assert parse_shard("2/8") == Shard(2, 8)
    assert parse_shard(" 1 / 1 ") == Shard(1, 1)
    assert str(parse_shard("3/4")) == "3/4"


@pytest.mark.parametrize("text, says", [
    ("0/4", "index must be 1 to 4"), ("5/4", "index must be 1 to 4"), ("1/0", "count must be 1 to 256"),
    ("1/257", "count must be 1 to 256"), ("2", "expected I/N"), ("a/b", "expected I/N"), ("", "expected I/N"),
])
def test_bad_shard_specs_are_refused_with_one_line(text, says):
    with pytest.raises(InputError) as caught:
        parse_shard(text)
    assert says in str(caught.value) and str(caught.value).startswith("--shard:")


def test_the_shard_is_sha256_of_the_id_mod_n():
    digest = hashlib.sha256(b"q-001").digest()
    assert shard_of("q-001", 7) == int.from_bytes(digest[:8], "big") % 7 + 1


def _gold(ids):
    return parse_gold_set({"schema_version": 1, "questions": [
        {"id": i, "question": f"alpha {i}", "gold": ["alpha"]} for i in ids]}, "gold.json")


def test_adding_questions_moves_no_other_question():
    before = _gold([f"q{i}" for i in range(200)])
    after = _gold([f"new{i}" for i in range(50)] + [f"q{i}" for i in range(200)])
    for n in (2, 5, 16):
        for index in range(1, n + 1):
            old = {q.id for _, q in select(before.questions, Shard(index, n))}
            new = {q.id for _, q in select(after.questions, Shard(index, n)) if q.id.startswith("q")}
            assert old == new


def test_a_shard_with_no_questions_is_an_empty_part(tmp_path):
    # Two questions over sixteen shards: most shards are empty, and each is still a part.
    config = write_project(tmp_path, [{"id": "a", "question": "alpha", "gold": ["alpha"]},
                                      {"id": "b", "question": "beta", "gold": ["beta"]}])
    taken = {shard_of("a", 16), shard_of("b", 16)}
    empty = next(i for i in range(1, 17) if i not in taken)
    part = run_in_process(config, shard=Shard(empty, 16))
    assert part["questions"] == [] and part["shard"]["ids"] == [] and part["shard"]["positions"] == []
    assert part["summary"]["overall"] == {"count": 0, "means": {}}
    assert part["gold_set"]["questions"] == 2  # the whole gold set's size, for the merge's check


WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "boom"]
question_rows = st.fixed_dictionaries({
    "word": st.sampled_from(WORDS),
    # At least one positive grade (the gold-set rule); "retired" is not in the index: stale.
    "gold": st.dictionaries(st.sampled_from(["alpha", "beta", "gamma", "retired"]), st.integers(0, 3),
                            min_size=1, max_size=3).filter(lambda g: max(g.values()) > 0),
    "tags": st.lists(st.sampled_from(["how-to", "api", "faq"]), max_size=2, unique=True),
    "unanswerable": st.booleans(),
})
gold_sets = st.lists(st.tuples(st.text("abcxyz-_09", min_size=1, max_size=6), question_rows),
                     min_size=0, max_size=25, unique_by=lambda pair: pair[0])


def _questions(rows):
    out = []
    for n, (qid, row) in enumerate(rows):
        q = {"id": qid, "question": f"{row['word']} question {n}", "tags": row["tags"]}
        if row["unanswerable"]:
            q.update(gold=[], unanswerable=True)
        else:
            q["gold"] = row["gold"]
        out.append(q)
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=gold_sets, count=st.integers(1, 16), order=st.randoms(use_true_random=False))
def test_shards_partition_the_gold_set_and_merge_into_the_unsharded_run(rows, count, order):
    with tempfile.TemporaryDirectory() as tmp:
        config = write_project(Path(tmp), _questions(rows))
        whole = run_in_process(config)
        paths = [run_to(config, Path(tmp) / f"part-{i}.json", shard=Shard(i, count)) for i in range(1, count + 1)]
        parts = [read_run(p) for p in paths]
        order.shuffle(paths)  # the merge takes parts in any order
        merged = merge_in_process(paths, Path(tmp) / "merged.json")
    ids = [set(p["shard"]["ids"]) for p in parts]
    assert set().union(*ids) == {qid for qid, _ in rows}
    assert sum(len(s) for s in ids) == len(rows)  # disjoint
    assert without_times(merged) == without_times(whole)
    assert json.loads(without_times(merged))["summary"] == json.loads(without_times(whole))["summary"]
