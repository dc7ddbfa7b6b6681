"""github/job.py: the action's log line."""

from __future__ import annotations

import sys

from ci_eval.github import job


class Writes:
    """A stream that keeps each write call apart, as another thread's write would land
    between two of them."""

    def __init__(self):
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_a_log_line_is_written_whole_with_its_newline_in_one_call(monkeypatch):
    stream = Writes()
    monkeypatch.setattr(sys, "stderr", stream)
    job.log("ci-eval: warning: skipping the baseline from run 7: gone")
    # a progress line written by the retrieval thread can only fall before or after it
    assert stream.calls == ["ci-eval: warning: skipping the baseline from run 7: gone\n"]
