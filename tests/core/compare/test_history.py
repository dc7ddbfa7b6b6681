"""core/compare/history.py: which questions broke when, which flap, each tag's trend.

Rows are fed straight to the builder (no files); every expected value is counted from the
plan the test wrote."""

from __future__ import annotations

import math

import pytest

from ci_eval.core.compare.history import ALL, FLAP_CHANGES, HistoryBuilder, RunMark, config_key, csv_pieces

K = 5
METRICS = ("hit@5", "mrr")
RUNS = 30


def values(rank):
    return {"hit@5": float(rank is not None and rank <= K), "mrr": 0.0 if rank is None else 1.0 / rank}


def build(plans, *, tags=None, golds=None, keys=None, unanswerable=()):
    runs = len(next(iter(plans.values())))
    keys = keys or ["cfg"] * runs
    marks = [RunMark(f"r{r}.json", f"{r:040x}", f"2026-11-01T{r:02d}:00:00Z",
                     config_key({"retriever": {"k1": keys[r]}}, "docs-1")) for r in range(runs)]
    builder = HistoryBuilder(marks, METRICS, K)
    for r in range(runs):
        for qid, ranks in plans.items():
            if ranks[r] == "absent":
                continue
            gold = [[(golds or {}).get(qid, ["g"] * runs)[r], 1]]
            if qid in unanswerable:
                builder.add(r, qid, (tags or {}).get(qid, ()), [], True, None, {})
            else:
                builder.add(r, qid, (tags or {}).get(qid, ()), gold, False, ranks[r], values(ranks[r]))
    return builder.build()


def transitions(states):
    known = [s for s in states if s is not None]
    return sum(a != b for a, b in zip(known, known[1:]))


BREAKS_AT = 16  # 0-based: the 17th run
PLANS = {
    "steady": [1] * RUNS,
    "breaks": [2] * BREAKS_AT + [None] * (RUNS - BREAKS_AT),
    "flaps": [None if r % 3 == 1 else 3 for r in range(RUNS)],
    "never": [None] * RUNS,
    "slides": [4] * 10 + [9] * 20,  # retrieved, then below k: a miss at hit@5
}


def by_id(history):
    return {line.id: line for line in history.lines()}


def test_a_break_names_its_run_and_a_flap_is_told_from_it():
    lines = by_id(build(PLANS))
    assert lines["breaks"].failing_since == BREAKS_AT and lines["breaks"].broken_by == BREAKS_AT
    assert not lines["breaks"].flapping and lines["breaks"].changes == 1
    flap_states = [r is not None for r in PLANS["flaps"]]
    assert lines["flaps"].changes == transitions(flap_states) and lines["flaps"].flapping
    assert lines["flaps"].failing_since is None  # its last run retrieved it
    assert lines["flaps"].misses == flap_states.count(False)
    assert lines["never"].failing_since == 0 and lines["never"].broken_by is None
    assert lines["slides"].broken_by == 10 and lines["slides"].ranks[10:] == (9,) * 20
    assert lines["steady"].failing_since is None and lines["steady"].changes == 0


def test_worst_first_broken_then_never_in_the_top_k_then_flapping():
    lines = build(PLANS).lines()
    misses = {q: sum(r is None or r > K for r in plan) for q, plan in PLANS.items()}
    broken = sorted(["breaks", "slides"], key=lambda q: -misses[q])  # most misses first
    assert [line.id for line in lines] == [*broken, "never", "flaps", "steady"]


def test_changes_across_a_gold_edit_or_a_config_change_are_not_flaps():
    plan = {"q": [1, None, 1, None, 1, None, 1]}
    # each change lands on a run whose gold (odd runs) or config (even runs) differs
    golds = {"q": ["g", "h", "h", "i", "i", "j", "j"]}
    keys = ["a", "a", "b", "b", "c", "c", "d"]
    line = by_id(build(plan, golds=golds, keys=keys))["q"]
    assert line.changes == 0 and not line.flapping
    same = by_id(build(plan))["q"]
    assert same.changes == transitions([r is not None for r in plan["q"]]) >= FLAP_CHANGES


def test_runs_a_question_is_absent_from_are_stepped_over():
    line = by_id(build({"q": [1, "absent", None, "absent", 1, None, 1]}))["q"]
    assert line.ranks[1] == line.ranks[3] == -1
    assert line.changes == transitions([True, False, True, False, True])
    assert line.hits + line.misses == 5


def test_unanswerable_questions_have_no_state():
    line = by_id(build({"u": [None] * 4, "a": [1] * 4}, unanswerable={"u"}))["u"]
    assert line.failing_since is None and line.hits == line.misses == 0


def test_each_tag_mean_is_the_count_over_its_questions():
    tags = {"steady": ["a"], "breaks": ["a", "b"], "flaps": ["b"], "never": [], "slides": ["b"]}
    trends = build(PLANS, tags=tags).trends()
    for tag, members in (("a", ["steady", "breaks"]), ("b", ["breaks", "flaps", "slides"]), (ALL, list(PLANS))):
        for r in range(RUNS):
            hits = [PLANS[q][r] is not None and PLANS[q][r] <= K for q in members]
            ranks = [PLANS[q][r] for q in members]
            assert trends[tag]["hit@5"][r].mean == pytest.approx(sum(hits) / len(members))
            assert trends[tag]["mrr"][r].mean == pytest.approx(
                math.fsum(0.0 if x is None else 1.0 / x for x in ranks) / len(members), rel=1e-6)
            assert trends[tag]["hit@5"][r].n == len(members)


def test_a_tag_losing_enough_questions_at_once_is_marked_beyond_noise():
    lost, runs, at = 12, 8, 5
    plans = {f"t{i}": [1] * at + [None] * (runs - at) for i in range(lost)}
    plans.update({f"o{i}": [1] * runs for i in range(20)})
    tags = {q: ["t"] for q in plans if q.startswith("t")}
    trends = build(plans, tags=tags).trends()
    # exact McNemar on 12 lost, 0 gained, Holm over the 2 metrics of the family: p * 2 < 0.05
    p = 2 * 0.5 ** lost
    assert p * len(METRICS) < 0.05
    marked = [r for r, point in enumerate(trends["t"]["hit@5"]) if point.significant]
    assert marked == [at]
    assert trends["t"]["hit@5"][at].delta == pytest.approx(-1.0)
    # one question breaking among 32 is noise
    few = build({"x": [1, 1, None, None], **{f"o{i}": [1] * 4 for i in range(31)}}).trends()
    assert not any(point.significant for point in few[ALL]["hit@5"])


def csv_rows(history):
    import csv
    import io

    return list(csv.reader(io.StringIO("".join(csv_pieces(history)))))


def test_the_csv_is_one_line_per_question_and_run_it_is_in():
    plans = {"q": [1, "absent", None], "r": [2, 2, 2]}
    rows = csv_rows(build(plans))
    assert rows[0][:6] == ["question", "run", "sha", "created_at", "hit", "first_gold_rank"]
    assert len(rows) - 1 == sum(r != "absent" for plan in plans.values() for r in plan)
    q_rows = [row for row in rows[1:] if row[0] == "q"]
    assert [(row[1], row[4], row[5]) for row in q_rows] == [("1", "1", "1"), ("3", "0", "")]


def test_the_csv_is_what_csv_writer_writes_of_each_question_and_run():
    """The arrays' CSV, byte for byte, is the definition written a line at a time by
    csv.writer: ids that need quoting, a question absent from a run, an unanswerable one,
    ranks beyond k, a metric not recorded, more questions than one piece holds."""
    import csv
    import io

    import numpy as np

    ids = ['say "hi"', "a,b", "two\nlines", "", "ünï"] + [f"q{i}" for i in range(7)]
    plans = {qid: [1, "absent", None, 9, 2][i % 5:] + [1, "absent", None, 9, 2][:i % 5] for i, qid in enumerate(ids)}
    history = build(plans, unanswerable=("q3",))
    history.values[0, 0, 1] = np.nan  # mrr not recorded
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["question", "run", "sha", "created_at", "hit", "first_gold_rank", *history.metrics])
    state = history.states()
    for i, qid in enumerate(history.ids):
        for r, run in enumerate(history.runs):
            rank = int(history.ranks[i, r])
            if rank != -1:
                writer.writerow([qid, r + 1, run.sha or "", run.created_at or "",
                                 "" if state[i, r] < 0 else int(state[i, r]), "" if rank <= 0 else rank,
                                 *("" if np.isnan(v) else f"{v:.6g}" for v in history.values[i, r].tolist())])
    assert "".join(csv_pieces(history, questions=4)) == out.getvalue()


def test_a_run_s_columns_say_what_its_rows_say_one_by_one():
    """``add_run`` with a run's columns builds the history ``add`` builds a row at a time: a
    question new in a later run, one whose gold and tags change, one unanswerable, a metric
    not recorded, a rank past int16."""
    import numpy as np

    from ci_eval.core.compare.history import RANK_CAP, RunRows, gold_keys

    runs = [  # (id, tags, gold, unanswerable, first gold rank, values) per row
        [("a", ["t"], [["g", 1]], False, 1, {"hit@5": 1.0, "mrr": 1.0}),
         ("b", [], [["g", 2], ["h", 1]], False, None, {"hit@5": 0.0}),
         ("c", ["t", "u"], [], True, None, {})],
        [("d", ["u"], [["g", 1]], False, 40_000, {"hit@5": 0.0, "mrr": 0.0}),
         ("b", ["t"], [["h", 1], ["g", 2]], False, 3, {"hit@5": 1.0, "mrr": 1 / 3}),
         ("a", ["t"], [["g", 3]], False, 2, {"hit@5": 1.0, "mrr": 0.5})],
    ]
    marks = [RunMark(f"r{r}.json", None, None, config_key({}, None)) for r in range(2)]
    by_rows, by_columns = HistoryBuilder(marks, METRICS, K), HistoryBuilder(marks, METRICS, K)
    for r, rows in enumerate(runs):
        for row in rows:
            by_rows.add(r, *row)
        metrics = ("mrr", "hit@5")  # the run's own order of names
        by_columns.add_run(r, RunRows(
            metrics, [row[0] for row in rows], [tuple(row[1]) for row in rows],
            np.array([gold_keys([c for c, _ in g], [x for _, x in g], [0, len(g)])[0] for g in (row[2] for row in rows)]),
            np.array([row[3] for row in rows]),
            np.array([0 if row[4] is None else min(row[4], RANK_CAP) for row in rows], dtype=np.int16),
            np.array([[row[5].get(m, np.nan) for m in metrics] for row in rows], dtype=np.float32)))
    a, b = by_rows.build(), by_columns.build()
    assert a.ids == b.ids == ("a", "b", "c", "d") and a.tags == b.tags
    assert np.array_equal(a.ranks, b.ranks) and np.array_equal(a.gold_changed, b.gold_changed)
    assert np.array_equal(a.values, b.values, equal_nan=True)
    assert a.gold_changed[0].tolist() == [False, True] and not a.gold_changed[1].any()  # b's gold reordered only


def test_room_reserved_for_a_run_s_questions_changes_nothing_the_history_says():
    """3,000 questions (past the first 1,024 rows) over 4 runs, a fifth of them new in the
    last run: the same arrays whether room is reserved for each run's count or found by
    doubling as rows arrive."""
    import numpy as np

    marks = [RunMark(f"r{r}.json", f"{r:040x}", f"2026-11-0{r + 1}T00:00:00Z", config_key({}, "docs-1"))
             for r in range(4)]
    built = []
    for reserve in (False, True):
        builder = HistoryBuilder(marks, METRICS, K)
        for r in range(4):
            ids = [f"q{i}" for i in range(2400 if r < 3 else 3000)]
            if reserve:
                builder.reserve(len(ids))
            for i, qid in enumerate(ids):
                rank = None if (i + r) % 7 == 0 else 1 + (i * r) % 9
                builder.add(r, qid, ("t",), [["g", 1]], False, rank, values(rank))
        built.append(builder.build())
    plain, reserved = built
    assert plain.ids == reserved.ids and len(plain.ids) == 3000
    assert np.array_equal(plain.ranks, reserved.ranks)
    assert np.array_equal(plain.values, reserved.values, equal_nan=True)
    assert plain.lines() == reserved.lines()


def test_at_100000_questions_the_first_rows_are_the_long_breaks_not_the_flappers():
    import numpy as np

    from ci_eval.core.compare.history import MISSED, History

    broken, flappers = 2_000, 98_000
    marks = [RunMark(f"r{r}.json", f"{r:040x}", None, config_key({}, None)) for r in range(RUNS)]
    ranks = np.ones((broken + flappers, RUNS), dtype=np.int16)
    ranks[:broken, RUNS - 20:] = MISSED  # broken for the last 20 runs
    ranks[broken:, 1::2] = MISSED  # missed every other run: 15 misses, failing now
    ids = tuple(f"b{i:05d}" for i in range(broken)) + tuple(f"f{i:05d}" for i in range(flappers))
    history = History(tuple(marks), ("hit@5",), K, ids, ((),) * len(ids), ranks,
                      np.zeros((len(ids), RUNS, 1), dtype=np.float32), np.zeros(ranks.shape, dtype=bool))
    lines = history.lines()
    assert [line.id for line in lines[:broken]] == list(ids[:broken])
    assert all(line.flapping for line in lines[broken:]) and lines[broken].misses == RUNS // 2
    assert lines[0].failing_since == RUNS - 20 and not lines[0].flapping
