"""trec_eval's tie order over many groups of rows at once, held to ``order`` of each group."""

from __future__ import annotations

import numpy as np
import pytest

from ci_eval.core.measure.ranking import distinct_sorted, order_rows
from ci_eval.core.measure.trec_order import order


def _bytes(ids):
    return np.array([i.encode() for i in ids], dtype=bytes)


@pytest.mark.parametrize("seed", range(20))
def test_order_rows_agrees_with_order(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    ids = [f"d{int(x)}" + "x" * int(rng.integers(0, 12)) for x in rng.integers(0, 1000, n)]
    ids = list(dict.fromkeys(ids))
    n = len(ids)
    groups = rng.integers(0, 4, n)
    if seed % 2:
        groups = np.sort(groups)
    scores = rng.integers(0, 3, n).astype(float)
    perm = order_rows(groups, scores, _bytes(ids))
    rows = np.arange(n) if perm is None else perm
    seen: list[int] = []
    for g in groups[rows]:
        if not seen or seen[-1] != g:
            assert g not in seen  # each group contiguous
            seen.append(g)
    for g in seen:
        got = [ids[i] for i in rows if groups[i] == g]
        expected = order([(ids[i], scores[i]) for i in range(n) if groups[i] == g]).ids
        assert tuple(got) == expected


def test_order_rows_returns_none_when_already_in_order():
    ids = ["c", "b", "a"]
    assert order_rows(np.zeros(3, int), np.array([1.0, 1.0, 1.0]), _bytes(ids)) is None


@pytest.mark.parametrize("seed", range(20))
def test_order_moves_are_order_rows_in_two_parts(seed):
    from ci_eval.core.measure.ranking import order_moves

    rng = np.random.default_rng(50 + seed)
    n = int(rng.integers(2, 80))
    ids = list(dict.fromkeys(f"d{int(x)}" for x in rng.integers(0, 60, n)))
    n = len(ids)
    groups = rng.integers(0, 3, n)
    if seed % 2:
        groups = np.sort(groups)
    scores = rng.integers(0, 3, n).astype(float)
    if seed % 4 < 2:  # grouped files mostly come in score order
        scores = -np.sort(-scores)
    full = order_rows(groups, scores, _bytes(ids))
    heads = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    for perm, moves in (order_moves(groups, scores, _bytes(ids)),
                        order_moves(None, scores, _bytes(ids), heads, groups[heads])):
        rows = np.arange(n) if perm is None else perm
        if moves is not None:
            at, inner = moves
            fixed = np.arange(n)
            fixed[at] = at[inner]
            rows = rows[fixed]
        assert rows.tolist() == (np.arange(n) if full is None else full).tolist()


@pytest.mark.parametrize("seed", range(20))
def test_short_tie_runs_are_put_in_id_order_like_order(seed):
    # Real run files: grouped, in score order, most ties two rows long (compare-and-swap),
    # some longer (sorted); either way the order must be `order`'s.
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(2, 120))
    ids = list(dict.fromkeys(f"d{int(x)}" + "z" * int(rng.integers(0, 9)) for x in rng.integers(0, 10_000, n)))
    n = len(ids)
    groups = np.sort(rng.integers(0, 3, n))
    repeat = rng.choice([1, 2, 2, 2, 3, 5], size=n)
    scores = -np.sort(-np.repeat(rng.permutation(n).astype(float), repeat)[:n])
    perm = order_rows(groups, scores, _bytes(ids))
    rows = np.arange(n) if perm is None else perm
    for g in np.unique(groups):
        got = [ids[i] for i in rows if groups[i] == g]
        expected = order([(ids[i], scores[i]) for i in range(n) if groups[i] == g]).ids
        assert tuple(got) == expected


@pytest.mark.parametrize("step", [1, 2, 5, 40])
def test_tie_work_in_steps_of_whole_groups_orders_like_order(step, monkeypatch):
    # The ties are put in order a step of whole groups at a time; a step can hold one
    # row, a group bigger than the step, or several groups, and the order is `order`'s.
    from ci_eval.core.measure import ranking

    monkeypatch.setattr(ranking, "_CHUNK", step)
    rng = np.random.default_rng(300 + step)
    ids = list(dict.fromkeys(f"d{int(x)}" for x in rng.integers(0, 5_000, 300)))
    n = len(ids)
    groups = np.sort(rng.integers(0, 12, n))
    scores = -np.sort(-rng.integers(0, 4, n).astype(float))
    scores = np.concatenate([-np.sort(-scores[groups == g]) for g in np.unique(groups)])
    perm = order_rows(groups, scores, _bytes(ids))
    assert perm is not None
    for g in np.unique(groups):
        got = [ids[i] for i in perm if groups[i] == g]
        expected = order([(ids[i], scores[i]) for i in range(n) if groups[i] == g]).ids
        assert tuple(got) == expected


@pytest.mark.parametrize("seed", range(10))
def test_ids_as_words_order_like_ids_as_bytes(seed):
    # The TREC parser hands its ids over as rows of uint64 words of their bytes; the order
    # must be the one the same ids give as a bytes array.
    rng = np.random.default_rng(400 + seed)
    n = int(rng.integers(2, 200))
    ids = list(dict.fromkeys(f"d{int(x)}" + "q" * int(rng.integers(0, 20)) for x in rng.integers(0, 300, n)))
    n = len(ids)
    groups = np.sort(rng.integers(0, 4, n))
    scores = -np.sort(-rng.integers(0, 6, n).astype(float))
    as_bytes = _bytes(ids)
    width = 8 * -(-as_bytes.dtype.itemsize // 8)
    as_words = np.frombuffer(as_bytes.astype(f"S{width}").tobytes(), dtype=np.uint64).reshape(n, width // 8)
    assert (order_rows(groups, scores, as_words) == order_rows(groups, scores, as_bytes)).all()


def test_distinct_sorted_keeps_each_value_once():
    values = np.array([1, 1, 2, 5, 5, 5, 9])
    assert distinct_sorted(values).tolist() == sorted(set(values.tolist()))
    assert distinct_sorted(values[:0]).tolist() == []
