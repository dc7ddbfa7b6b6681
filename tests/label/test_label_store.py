"""The gold set under concurrent writers: real threads, two stores on one real file."""

import json
import threading

import pytest

from ci_eval.core.judgement import Stamp, apply_grade
from ci_eval.errors import InputErrors
from ci_eval.label.store import GoldStore


def test_concurrent_decisions_from_two_stores_all_land(tmp_path):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": ["x"]}]}))
    stores = [GoldStore(path), GoldStore(path)]  # as two `ci-eval label` processes would have

    def judge(store, name, chunks):
        for c in chunks:
            store.update(lambda d, c=c: apply_grade(d, "q1", c, 0, Stamp(name, "T")))

    threads = [threading.Thread(target=judge, args=(stores[i], f"j{i}", [f"c{i}-{n}" for n in range(15)]))
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gold = json.loads(path.read_text())["questions"][0]["gold"]
    assert len(gold) == 1 + 2 * 15
    assert not list(tmp_path.glob(".gold.json.*"))  # no temporary file left behind


def test_a_change_that_would_break_the_gold_set_writes_nothing(tmp_path):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": ["x"]}]}))
    before = path.read_bytes()
    with pytest.raises(InputErrors):
        GoldStore(path).update(lambda d: {**d, "questions": [{"id": "q1", "question": "a?", "gold": []}]})
    assert path.read_bytes() == before


def test_create_never_replaces_an_existing_file(tmp_path):
    path = tmp_path / "gold.json"
    path.write_text('{"schema_version": 1, "questions": []}')
    GoldStore(path).create({"schema_version": 1, "questions": [{"id": "q", "question": "b?", "gold": ["y"]}]})
    assert path.read_text() == '{"schema_version": 1, "questions": []}'
