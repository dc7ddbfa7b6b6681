"""The cycle collector: paused while a reader builds what stays alive, spaced out while the
worker streams its results, and as it was after either."""

import gc
import weakref

import pytest

from ci_eval.inputs.collector import collections_spaced, collector_paused


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


@pytest.mark.parametrize("was_enabled", [True, False])
def test_the_collector_is_paused_while_reading_and_as_it_was_after_even_on_error(was_enabled):
    (gc.enable if was_enabled else gc.disable)()
    try:
        with pytest.raises(ValueError), collector_paused():
            assert not gc.isenabled()
            raise ValueError("a read refused half way")
        assert gc.isenabled() is was_enabled
    finally:
        gc.enable()


def test_what_was_read_is_frozen_out_of_later_collections():
    gc.unfreeze()
    try:
        with collector_paused():
            read = [[i] for i in range(1000)]
        assert gc.get_freeze_count() >= len(read)
    finally:
        gc.unfreeze()
