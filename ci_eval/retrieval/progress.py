"""Progress on stderr: a bar on a terminal, a line every few seconds in CI logs."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, label: str, stream=None, interval: float = 5.0, enabled=True):
        self.total = max(total, 0)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.failed = 0
        self.start = time.monotonic()
        self._last = 0.0
        self.interval = interval
        self.enabled = enabled and self.total > 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, n: int = 1, failed: bool = False) -> None:
        self.done += n
        self.failed += int(failed)
        if not self.enabled:
            return
        now = time.monotonic()
        # A terminal redraws cheaply; a CI log keeps every line, so print there rarely.
        gap = 0.1 if self.tty else self.interval
        if now - self._last >= gap or self.done >= self.total:
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        tail = f"{self.done}/{self.total} {rate:,.1f}/s"
        if self.failed:
            tail += f", {self.failed} failed"
        if self.tty:
            width = 30
            filled = int(width * self.done / self.total)
            bar = "█" * filled + "░" * (width - filled)
            end = "\n" if self.done >= self.total else ""
            self.stream.write(f"\r{self.label} {bar} {tail} ~{left:,.0f}s left\x1b[K{end}")
        else:
            pct = 100 * self.done / self.total
            self.stream.write(f"{self.label}: {pct:5.1f}% ({tail}, {elapsed:,.1f}s elapsed)\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.done < self.total and self.tty:
            self.stream.write("\n")
            self.stream.flush()
