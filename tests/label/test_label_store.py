"""The gold set under concurrent writers: real threads, two stores on one real file, and two
real `ci-eval label` processes."""

import difflib
import json
import threading

import pytest

from ci_eval.core.gold.goldformat import dumps_gold_set
from ci_eval.core.gold.judgement import Stamp, apply_grade
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


def test_two_processes_through_a_symlink_and_the_real_path_lose_no_acknowledged_grade(tmp_path):
    """Real `ci-eval label` processes, one given the gold set through a symlink in another
    folder, one given its real path, judging at the same time over real HTTP."""
    from concurrent.futures import ThreadPoolExecutor

    from labelling import LabelProcess, post, write_project

    chunks = [f"c{n:02d}" for n in range(60)]
    (tmp_path / "project").mkdir()
    project = write_project(tmp_path / "project", texts={c: f"text of {c}" for c in chunks},
                            questions=[{"id": "q1", "question": "c00 please", "gold": ["c00"]}])
    (project / "run.trec").write_text("".join(f"q1 Q0 {c} {n + 1} {100 - n} r\n" for n, c in enumerate(chunks)))
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "gold.json").symlink_to(project / "gold.json")
    args = ("--no-retriever", "--pool", "run.trec", "--chunks", "chunks.jsonl", "--depth", "60")
    by_link = LabelProcess(project, "--gold", str(tmp_path / "links" / "gold.json"), *args, judge="Ann")
    by_path = LabelProcess(project, "--gold", "gold.json", *args, judge="Bob")
    try:
        jobs = [((by_link, by_path)[n % 2], c) for n, c in enumerate(chunks[1:])]
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda job: (job[1], post(job[0], "/api/grade", {
                "question": "q1", "chunk": job[1], "grade": 0, "seen": None})[0]), jobs))
    finally:
        by_link.kill()
        by_path.kill()
    acknowledged = {c for c, status in answers if status == 200}
    assert acknowledged == set(chunks[1:])
    gold = json.loads((project / "gold.json").read_text())["questions"][0]["gold"]
    assert set(gold) == {"c00"} | acknowledged
    assert (tmp_path / "links" / "gold.json").is_symlink()  # the link is still a link


def test_a_hand_edit_between_decisions_is_read_again_not_overwritten(tmp_path):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": ["x"]}]}))
    store = GoldStore(path)
    store.update(lambda d: apply_grade(d, "q1", "y", 0, Stamp("Ann", "T")))
    assert store.read() is store.read()  # unchanged file: the document kept, not parsed again
    edited = json.loads(path.read_text())
    edited["questions"].append({"id": "q2", "question": "b?", "gold": ["z"]})
    path.write_text(json.dumps(edited))  # in place: same inode
    store.update(lambda d: apply_grade(d, "q1", "w", 0, Stamp("Ann", "T")))
    after = json.loads(path.read_text())
    assert [q["id"] for q in after["questions"]] == ["q1", "q2"]
    assert after["questions"][0]["gold"] == {"x": 1, "y": 0, "w": 0}


def test_a_change_is_checked_against_the_whole_set_where_it_must_be(tmp_path):
    """Only the questions a change made are checked again, but an id it repeats from an
    untouched question is still refused, and a bad new question still words its problem."""
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": ["x"]},
                                                                   {"id": "q2", "question": "b?", "gold": ["y"]}]}))
    store, before = GoldStore(path), path.read_bytes()
    again = {"id": "q2", "question": "c?", "gold": ["z"]}
    with pytest.raises(InputErrors, match="q2"):
        store.update(lambda d: {**d, "questions": d["questions"] + [again]})
    with pytest.raises(InputErrors, match="gold"):
        store.update(lambda d: {**d, "questions": d["questions"] + [{"id": "q3", "question": "c?", "gold": []}]})
    assert path.read_bytes() == before
    store.update(lambda d: {**d, "questions": d["questions"] + [{"id": "q3", "question": "c?", "gold": ["z"]}]})
    assert [q["id"] for q in json.loads(path.read_text())["questions"]] == ["q1", "q2", "q3"]


def test_a_file_laid_out_otherwise_keeps_its_layout_through_every_grade(tmp_path):
    path = tmp_path / "gold.json"
    questions = [{"id": f"q{n}", "question": f"question {n}?", "gold": {"x": 1}, "tags": ["t"]} for n in range(1, 6)]
    before = json.dumps({"schema_version": 1, "questions": questions}, indent=2) + "\n"
    path.write_text(before)
    store = GoldStore(path)
    for chunk in ("y", "z"):
        store.update(lambda d, c=chunk: apply_grade(d, "q3", c, 2, Stamp("Ann", "T")))
    after = path.read_text()
    doc = json.loads(after)
    assert doc["questions"][2]["gold"] == {"x": 1, "y": 2, "z": 2}
    assert after != dumps_gold_set(doc)  # not turned into ci-eval's own layout
    changed = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]
    # Only q3's gold and its provenance change: the other questions' lines stay as they were.
    assert all('"q1"' not in line and '"question 1?"' not in line for line in changed), changed
    assert len(changed) < len(before.splitlines()) // 2, changed


def test_a_file_in_ci_eval_s_layout_stays_in_it(tmp_path):
    path = tmp_path / "gold.json"
    doc = {"schema_version": 1, "questions": [{"id": "q1", "question": "a?", "gold": ["x"]}]}
    path.write_text(dumps_gold_set(doc))
    store = GoldStore(path)
    new = store.update(lambda d: apply_grade(d, "q1", "y", 0, Stamp("Ann", "T")))
    assert path.read_text() == dumps_gold_set(new)
