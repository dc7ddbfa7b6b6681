"""A pool of long-lived worker threads with per-call and total timeouts."""

from __future__ import annotations

import queue
import threading
import time
from operator import attrgetter

from ci_eval.core.artefact.results import failed

_ID = attrgetter("id")  # an item's key by default: a question's id, taken in C


def lookahead(concurrency: int) -> int:
    """How far ahead of the slowest item work may run: also how many calls may still be
    made after the caller stops reading (a run stopped early)."""
    return max(4 * concurrency, 64)


class _Pool:
    """The state of one ``run_pool``: items handed to workers through ``inbox``, results
    back through ``done``, and the bookkeeping of what started, finished or was given up."""

    def __init__(self, call, items, concurrency, timeout, total_timeout):
        self.call, self.items, self.concurrency = call, items, concurrency
        self.timeout, self.total_timeout = timeout, total_timeout
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        self.started: dict[int, float] = {}  # written by workers when they pick an item up
        self.finished: dict[int, object] = {}
        self.abandoned: set[int] = set()
        self.deadline = time.monotonic() + total_timeout if total_timeout else None
        self.window = lookahead(concurrency)
        self.next_to_queue = self.next_to_yield = 0

    def worker(self) -> None:
        while True:
            task = self.inbox.get()
            if task is None:
                return
            index, item = task
            self.started[index] = time.monotonic()
            self.done.put((index, self.call(item)))
            if index in self.abandoned:
                return  # timed out: a replacement already took this worker's place

    def spawn(self) -> None:
        threading.Thread(target=self.worker, daemon=True).start()

    def queue_more(self, out_of_time: bool) -> None:
        n = len(self.items)
        while not out_of_time and self.next_to_queue < n and self.next_to_queue - self.next_to_yield < self.window:
            self.inbox.put((self.next_to_queue, self.items[self.next_to_queue]))
            self.next_to_queue += 1

    def give_up_on_the_rest(self) -> None:
        for index in range(self.next_to_yield, len(self.items)):
            if index not in self.finished:
                what = "not finished" if index in self.started else "not run"
                self.finished[index] = failed(f"{what}: the total timeout of {self.total_timeout:g}s passed")
                self.abandoned.add(index)

    def collect(self, now: float) -> None:
        """Wait for a result (no longer than the nearest per-call timeout), then take what
        else is ready without waiting."""
        oldest = self.oldest_running()
        wait = 0.05 if oldest is None else max(0.0, min(0.05, oldest + self.timeout - now))
        try:
            index, result = self.done.get(timeout=wait)
            while True:
                self.finished.setdefault(index, result)
                index, result = self.done.get_nowait()
        except queue.Empty:
            pass

    def oldest_running(self) -> float | None:
        """When the longest-running call started; None when none is running."""
        finished = self.finished
        return min((t for i, t in list(self.started.items()) if i not in finished), default=None)

    def expire_late_calls(self) -> None:
        now = time.monotonic()
        oldest = self.oldest_running()
        if oldest is None or now - oldest <= self.timeout:
            return  # the common case: nothing is late, nothing to walk
        for index, t0 in list(self.started.items()):
            if index not in self.finished and now - t0 > self.timeout:
                self.finished[index] = failed(f"no answer within the {self.timeout:g}s timeout", self.timeout * 1000)
                self.abandoned.add(index)
                self.spawn()

    def stop(self) -> None:
        # Drop what was never started, then let each worker finish its current item and stop.
        while True:
            try:
                self.inbox.get_nowait()
            except queue.Empty:
                break
        for _ in range(self.concurrency + len(self.abandoned)):
            self.inbox.put(None)


def run_pool(call, items, concurrency, timeout, total_timeout, key=_ID):
    """Run ``call`` over ``items`` on ``concurrency`` long-lived worker threads; yield
    ``(key(item), result)`` in input order. A call past ``timeout`` seconds is reported as
    failed, its worker is abandoned and a fresh one takes its place; past
    ``total_timeout`` the rest are not started. Workers are daemon threads, so a call
    that never returns cannot keep the process alive at exit."""
    pool = _Pool(call, items, concurrency, timeout, total_timeout)
    for _ in range(min(concurrency, len(items))):
        pool.spawn()
    try:
        while pool.next_to_yield < len(items):
            now = time.monotonic()
            out_of_time = pool.deadline is not None and now >= pool.deadline
            pool.queue_more(out_of_time)
            if out_of_time:
                pool.give_up_on_the_rest()
            pool.collect(now)
            pool.expire_late_calls()
            while pool.next_to_yield in pool.finished:
                result = pool.finished.pop(pool.next_to_yield)
                pool.started.pop(pool.next_to_yield, None)
                yield key(items[pool.next_to_yield]), result
                pool.next_to_yield += 1
    finally:
        pool.stop()
