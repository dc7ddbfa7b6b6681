"""A pool of long-lived worker threads with per-call and total timeouts."""

from __future__ import annotations

import queue
import threading
import time

from ci_eval.core.results import failed


def lookahead(concurrency: int) -> int:
    """How far ahead of the slowest item work may run: also how many calls may still be
    made after the caller stops reading (a run stopped early)."""
    return max(4 * concurrency, 64)


def run_pool(call, items, concurrency, timeout, total_timeout, key=lambda q: q.id):
    """Run ``call`` over ``items`` on ``concurrency`` long-lived worker threads; yield
    ``(key(item), result)`` in input order. A call past ``timeout`` seconds is reported as
    failed, its worker is abandoned and a fresh one takes its place; past
    ``total_timeout`` the rest are not started. Workers are daemon threads, so a call
    that never returns cannot keep the process alive at exit."""
    inbox: queue.Queue = queue.Queue()
    done: queue.Queue = queue.Queue()
    started: dict[int, float] = {}  # written by workers when they pick an item up
    finished: dict[int, object] = {}
    abandoned: set[int] = set()
    deadline = time.monotonic() + total_timeout if total_timeout else None
    window = lookahead(concurrency)
    n = len(items)
    next_to_queue = next_to_yield = 0

    def worker() -> None:
        while True:
            task = inbox.get()
            if task is None:
                return
            index, item = task
            started[index] = time.monotonic()
            result = call(item)
            done.put((index, result))
            if index in abandoned:
                return  # timed out: a replacement already took this worker's place

    def spawn() -> None:
        threading.Thread(target=worker, daemon=True).start()

    for _ in range(min(concurrency, n)):
        spawn()
    try:
        while next_to_yield < n:
            now = time.monotonic()
            out_of_time = deadline is not None and now >= deadline
            while not out_of_time and next_to_queue < n and next_to_queue - next_to_yield < window:
                inbox.put((next_to_queue, items[next_to_queue]))
                next_to_queue += 1
            if out_of_time:
                for index in range(next_to_yield, n):
                    if index not in finished:
                        what = "not finished" if index in started else "not run"
                        finished[index] = failed(f"{what}: the total timeout of {total_timeout:g}s passed")
                        abandoned.add(index)
            live = [t for i, t in list(started.items()) if i not in finished]
            wait = 0.05 if not live else max(0.0, min(0.05, min(live) + timeout - now))
            try:
                index, result = done.get(timeout=wait)
                if index not in finished:
                    finished[index] = result
                while True:  # drain what else is ready without waiting
                    index, result = done.get_nowait()
                    if index not in finished:
                        finished[index] = result
            except queue.Empty:
                pass
            now = time.monotonic()
            for index, t0 in list(started.items()):
                if index not in finished and now - t0 > timeout:
                    finished[index] = failed(f"no answer within the {timeout:g}s timeout", timeout * 1000)
                    abandoned.add(index)
                    spawn()
            while next_to_yield in finished:
                result = finished.pop(next_to_yield)
                started.pop(next_to_yield, None)
                yield key(items[next_to_yield]), result
                next_to_yield += 1
    finally:
        # Drop what was never started, then let each worker finish its current item and stop.
        while True:
            try:
                inbox.get_nowait()
            except queue.Empty:
                break
        for _ in range(concurrency + len(abandoned)):
            inbox.put(None)

