"""core/compare/recent_runs.py: a branch's window of runs, question by question, built run by
run from real (typed) artefacts, read back as hostile input, and what it says of a question."""

from __future__ import annotations

import json

import numpy as np
import pytest
from factories import ranked_with_gold_at, run
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_eval.core.compare.recent_runs import (
    FLAP_CHANGES,
    RECENT_RUNS,
    RecentError,
    extend,
    failing_on_base,
    read_recent,
    regression_note,
    trail,
)


def _run(n: int, hits: dict, k: int = 5, extra: tuple = ()) -> object:
    """Run ``n`` of a branch: each question's first gold rank 1 when ``hits[id]``, else none."""
    specs = [{"id": qid, "gold": ["g"], "tags": ["t"] if qid != "solo" else [],
              "ranking": ranked_with_gold_at(1 if hit else None)} for qid, hit in hits.items()]
    specs += [{"id": qid, "gold": [], "unanswerable": True, "ranking": ranked_with_gold_at(None)} for qid in extra]
    return run(specs, k=k, sha=f"{n:040x}", created_at=f"2026-11-{1 + n % 28:02d}T00:00:00Z")


def _window(states: dict, k: int = 5):
    recent = None
    for n in range(len(next(iter(states.values())))):
        recent = extend(recent, _run(n, {q: s[n] == "1" for q, s in states.items()}, k))
    return recent


def test_each_run_adds_a_state_a_question_and_the_tag_mean():
    recent = _window({"a": "1101", "b": "0011"})
    assert recent.states == {"a": "1101", "b": "0011"}
    assert [sha for sha, _ in recent.runs] == [f"{n:040x}" for n in range(4)]
    # the tag is both questions: its hit@5 mean each run is the share of the two retrieved
    assert recent.tags == {"t": [0.5, 0.5, 0.5, 1.0]}


def test_a_question_new_to_the_gold_set_is_unmeasured_before_it_and_an_unanswerable_one_always():
    recent = extend(None, _run(0, {"a": True}))
    recent = extend(recent, _run(1, {"a": True, "new": False}, extra=("none",)))
    assert recent.states == {"a": "11", "new": "-0", "none": "--"}


def test_the_window_keeps_the_last_runs_and_drops_questions_gone_from_the_gold_set():
    recent = None
    for n in range(RECENT_RUNS + 5):
        hits = {"a": n % 2 == 0} if n < RECENT_RUNS else {"a": True, "b": True}
        recent = extend(recent, _run(n, hits))
    assert len(recent.runs) == RECENT_RUNS and recent.runs[0][0] == f"{5:040x}"
    assert len(recent.states["a"]) == RECENT_RUNS and recent.states["a"].endswith("11111")
    recent = extend(recent, _run(99, {"b": True}))
    assert set(recent.states) == {"b"}


def test_a_rerun_of_the_last_commit_replaces_it_and_another_k_starts_over():
    recent = extend(extend(None, _run(0, {"a": True})), _run(1, {"a": True}))
    again = extend(recent, _run(1, {"a": False}))
    assert again.states == {"a": "10"} and len(again.runs) == 2
    other_k = extend(recent, _run(2, {"a": False}, k=3))
    assert other_k.k == 3 and other_k.states == {"a": "0"}


@pytest.mark.parametrize("states, misses, changes, since", [
    ("1111", 0, 0, None),
    ("1100", 2, 1, 2),         # broken at the third run, missed since
    ("0000", 4, 0, None),      # never retrieved in the window: not "failing since"
    ("1-0-0", 2, 1, 2),        # runs that did not measure it are stepped over
    ("101010", 3, 5, 5),
])
def test_trail_counts_misses_changes_and_the_run_since_which_it_fails(states, misses, changes, since):
    line = trail(states)
    assert (line.misses, line.changes, line.failing_since) == (misses, changes, since)
    assert line.measured == len(states.replace("-", ""))
    assert line.flapping == (changes >= FLAP_CHANGES)


def test_the_note_beside_a_regression():
    recent = _window({"steady": "1" * 12, "flaky": "110110110111", "mixed": "111111100111"})
    assert regression_note(recent, "steady", "main") == "retrieved in the last 12 runs on main"
    assert regression_note(recent, "flaky", "main") == \
        "flapping on main: missed in 3 of the last 12 runs, possibly noise"
    assert regression_note(extend(None, _run(0, {"once": True})), "once", "main") == ""  # one run says nothing
    assert regression_note(recent, "mixed", "main") == ""  # one break and its fix: neither steady nor flapping
    assert regression_note(recent, "unknown", "main") == "" and regression_note(None, "steady", "main") == ""


def test_failing_on_the_base_names_the_commit_since_which_newest_first():
    recent = _window({"old": "110000", "new": "111110", "never": "000000", "fine": "111111", "flaky": "101010"})
    assert failing_on_base(recent) == [("new", f"{5:040x}", 1), ("old", f"{2:040x}", 4)]


def test_what_as_json_writes_read_recent_reads_back():
    recent = _window({"a": "10", "solo": "01"})
    assert read_recent(json.loads(json.dumps(recent.as_json()))) == recent


def _valid() -> dict:
    return _window({"a": "10"}).as_json()


@pytest.mark.parametrize("change, says", [
    (lambda d: d.update(schema_version=2), "schema_version"),
    (lambda d: d.update(k=0), "k is not"),
    (lambda d: d.update(k=True), "k is not"),
    (lambda d: d.update(runs=[]), "runs is not"),
    (lambda d: d["runs"].__setitem__(0, ["not hex", "x"]), "runs[0]"),
    (lambda d: d["runs"].__setitem__(0, ["ab\ud800", "x"]), "runs[0]"),
    (lambda d: d["states"].update(a="1"), "states['a']"),
    (lambda d: d["states"].update(a="1x"), "states['a']"),
    (lambda d: d["states"].update(a=[1, 0]), "states['a']"),
    (lambda d: d.update(states=[]), "states is not"),
    (lambda d: d["tags"].update(t=[0.5, 2.0]), "tags['t']"),
    (lambda d: d["tags"].update(t=[0.5, True]), "tags['t']"),
    (lambda d: d["tags"].update(t=[0.5]), "tags['t']"),
    (lambda d: d.update(tags=None), "tags is not"),
])
def test_a_stored_window_of_another_shape_is_refused_naming_what(change, says):
    raw = _valid()
    raw["tags"] = {"t": [0.0, 1.0]}
    change(raw)
    with pytest.raises(RecentError, match=None) as caught:
        read_recent(raw)
    assert says in str(caught.value)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                     max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({"schema_version": st.just(1), "k": st.integers(-2, 12) | _JSON,
                              "runs": st.lists(st.lists(st.text("0123456789abcdef", max_size=4), max_size=3) | _JSON,
                                               max_size=3) | _JSON,
                              "states": st.dictionaries(st.text(max_size=4), st.text("01-x", max_size=3) | _JSON,
                                                        max_size=3) | _JSON,
                              "tags": st.dictionaries(st.text(max_size=4), st.lists(
                                  st.none() | st.floats(-1, 2), max_size=3) | _JSON, max_size=3) | _JSON}) | _JSON)
def test_any_json_is_read_as_a_window_or_refused_with_a_reason(raw):
    try:
        recent = read_recent(raw)
    except RecentError as why:
        assert str(why)
        return
    # what was read is what as_json writes again
    assert read_recent(recent.as_json()) == recent


def _toggled_window(states: dict, toggled: bool):
    """A window whose runs alternate a retriever parameter (``toggled``) or keep it."""
    from factories import DEFAULT_CONFIG

    recent = None
    for n in range(len(next(iter(states.values())))):
        params = {**DEFAULT_CONFIG["retriever"]["params"], "rerank": toggled and n % 2 == 1}
        config = {"retriever": {**DEFAULT_CONFIG["retriever"], "params": params}}
        specs = [{"id": q, "gold": ["g"], "ranking": ranked_with_gold_at(1 if s[n] == "1" else None)}
                 for q, s in states.items()]
        recent = extend(recent, run(specs, sha=f"{n:040x}", config=config,
                                    created_at=f"2026-11-{1 + n:02d}T00:00:00Z"))
    return recent


def test_a_change_only_when_a_retriever_parameter_was_toggled_is_not_flapping():
    # the question follows the parameter: hit without the reranker, missed with it
    states = {"follows": "101010101010", "steady": "111111111111"}
    toggled = _toggled_window(states, toggled=True)
    assert regression_note(toggled, "follows", "main") == ""
    assert trail(toggled.states["follows"], toggled.run_configs()).changes == 0
    # the same states under one config are what history calls flapping
    kept = _toggled_window(states, toggled=False)
    assert regression_note(kept, "follows", "main") == (
        f"flapping on main: missed in {states['follows'].count('0')} of the last 12 runs, possibly noise")
    # one rule: `ci-eval history`'s count for the same runs (core/compare/history.py)
    from ci_eval.core.compare.history import state_changes

    state = np.array([[int(c) for c in states["follows"]]], dtype=np.int8)
    configs = np.array([int(c, 16) for c in toggled.run_configs()], dtype=np.int64)
    assert state_changes(state, configs)[1].sum() == trail(toggled.states["follows"], toggled.run_configs()).changes


def test_a_window_stored_without_configs_reads_as_one_config():
    raw = _window({"a": "1010"}).as_json()
    del raw["configs"]
    recent = read_recent(raw)
    assert recent.run_configs() == ("",) * 4 and trail(recent.states["a"], recent.run_configs()).changes == 3
    raw["configs"] = ["xyz"] * 4
    with pytest.raises(RecentError, match="configs"):
        read_recent(raw)


def test_a_change_only_across_a_gold_edit_is_not_flapping():
    from ci_eval.core.compare.recent_runs import gold_prints

    # the question's gold chunk is relabelled at every run, and its state follows the label
    plan = "101010101010"
    recent, before = None, None
    for n, state in enumerate(plan):
        gold = f"g{n}"
        specs = [{"id": "relabelled", "gold": [gold], "ranking": ranked_with_gold_at(1 if state == "1" else None, gold=gold)},
                 {"id": "steady", "gold": ["g"], "ranking": ranked_with_gold_at(1)}]
        head = run(specs, sha=f"{n:040x}", created_at=f"2026-11-{1 + n:02d}T00:00:00Z")
        recent = extend(recent, head, gold_prints(before))
        before = head
    assert recent.states["relabelled"] == "1" + "".join("H" if c == "1" else "M" for c in plan[1:])
    assert recent.states["steady"] == "1" * len(plan)
    assert regression_note(recent, "relabelled", "main") == ""  # each change came with its gold's edit
    assert trail(recent.states["relabelled"], recent.run_configs()).misses == plan.count("0")
    assert read_recent(json.loads(json.dumps(recent.as_json()))) == recent
    # without the previous run's gold nothing is marked, and the same states flap (today's window)
    unmarked = None
    for n, state in enumerate(plan):
        unmarked = extend(unmarked, _run(n, {"relabelled": state == "1"}))
    assert regression_note(unmarked, "relabelled", "main").startswith("flapping on main")
