"""The cycle collector: spaced out while a run or the worker streams results, and as it was
after."""

import gc
import weakref

import pytest

from ci_eval.inputs.collector import collections_spaced


class _Node:
    pass


def test_collections_are_spaced_during_the_run_and_restored_after_it_even_on_error():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collections_spaced(5000):
        assert gc.get_threshold() == (5000, *before[1:])
        raise RuntimeError("a retriever's failure escaping the run")
    assert gc.get_threshold() == before


def test_a_cycle_made_during_the_run_is_still_collected():
    with collections_spaced(50):
        node = _Node()
        node.me = node  # a cycle: reference counting alone never frees it
        gone = weakref.ref(node)
        del node
        kept = [[] for _ in range(200)]  # more new containers alive than the threshold
        assert gone() is None and len(kept) == 200
