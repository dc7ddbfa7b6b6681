"""Hypothesis strategies for version 2 question rows as json gives them: exact types and no
NaN (the reader refuses the NaN literal), with whole floats where an integer is asked, ranks
past 32 bits, and chunk ids from a small pool so gold, stale and ranking ids meet."""

from __future__ import annotations

import json

from hypothesis import strategies as st

METRICS = 3  # how many metric values a measured row holds

CHUNK_IDS = st.sampled_from(["a", "b", "c", "d", "e", "é"]) | st.text(max_size=3)


def _unique_pairs(values, max_size: int = 4):
    return st.lists(st.tuples(CHUNK_IDS, values), max_size=max_size, unique_by=lambda p: p[0]).map(
        lambda pairs: [list(p) for p in pairs])


# json gives inf for 1e400, and an integer of any size
NUMBERS = (st.integers(-3, 3) | st.floats(allow_nan=False) | st.sampled_from([1.0, 0.0, 2.5, 1e308])
           | st.just(10 ** 400))
UNIT = st.floats(0, 1) | st.sampled_from([0, 1])
GRADES = st.integers(-1000, 1000) | st.sampled_from([0, 1, 2, 3, 2.0, -1.0])

ROWS = st.tuples(
    st.text(min_size=1, max_size=8),  # id
    st.text(max_size=8),  # question
    st.lists(st.sampled_from(["faq", "how-to"]) | st.text(max_size=4), max_size=3),  # tags
    st.booleans(),  # unanswerable
    st.sampled_from(["ok", "stale", "unanswerable", "error"]),  # status
    _unique_pairs(GRADES),  # gold
    st.lists(CHUNK_IDS, max_size=2),  # stale
    st.just([]) | st.lists(st.none() | UNIT, min_size=METRICS, max_size=METRICS),  # metrics
    st.none() | st.integers(1, 20) | st.just(3.0) | st.just(2 ** 40),  # first_gold_rank
    st.none() | st.floats(-10, 10) | st.integers(-3, 3),  # top_score
    st.none() | st.floats(0, 100),  # latency_ms
    st.none() | st.booleans(),  # answer_correct
    st.none() | UNIT,  # judged_at_k
    st.none() | st.text(max_size=4),  # error
    st.lists(st.text(max_size=4), max_size=2),  # warnings
    _unique_pairs(st.floats(-10, 10) | st.integers(-3, 3), 8),  # ranking
).map(list)


def body_of(rows) -> bytes:
    """Rows as the writer lays them out between the questions list's brackets, one a line (a
    lone surrogate drawn into a string becomes bytes that are not UTF-8; json.dumps writes
    NaN and Infinity as those words)."""
    lines = ("  " + json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in rows)
    return ",\n".join(lines).encode("utf-8", "surrogatepass")
